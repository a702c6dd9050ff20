"""Tuneboard's PyTorch training worker for Hugging Face models (LoRA SFT and RL)."""

__version__ = "0.1.0"
