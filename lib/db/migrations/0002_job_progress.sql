ALTER TABLE "training_jobs" ADD COLUMN "progress_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "training_jobs" ADD COLUMN "cancel_requested_at" timestamp with time zone;