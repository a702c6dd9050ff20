CREATE TABLE "auth_throttle" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"window_started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"blocked_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "log_metric_sums" (
	"model_id" uuid NOT NULL,
	"step" integer NOT NULL,
	"split" text NOT NULL,
	"sums" jsonb NOT NULL,
	CONSTRAINT "log_metric_sums_model_id_step_split_pk" PRIMARY KEY("model_id","step","split")
);
--> statement-breakpoint
ALTER TABLE "training_jobs" ADD COLUMN "created_by" uuid;--> statement-breakpoint
ALTER TABLE "log_metric_sums" ADD CONSTRAINT "log_metric_sums_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "training_jobs" ADD CONSTRAINT "training_jobs_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;