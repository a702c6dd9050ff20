CREATE TABLE "training_workers" (
	"id" text PRIMARY KEY NOT NULL,
	"capabilities" jsonb NOT NULL,
	"info" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"current_job_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "training_workers_last_seen_idx" ON "training_workers" USING btree ("last_seen_at");