ALTER TABLE "models" ADD COLUMN "checkpoint_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "models" m SET "checkpoint_count" = (SELECT count(*) FROM "checkpoints" c WHERE c."model_id" = m."id");
