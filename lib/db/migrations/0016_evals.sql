CREATE TABLE "eval_examples" (
	"set_id" uuid NOT NULL,
	"idx" integer NOT NULL,
	"messages" jsonb NOT NULL,
	"reference" text,
	"metadata" jsonb NOT NULL,
	CONSTRAINT "eval_examples_set_id_idx_pk" PRIMARY KEY("set_id","idx")
);
--> statement-breakpoint
CREATE TABLE "eval_results" (
	"run_id" uuid NOT NULL,
	"example_idx" integer NOT NULL,
	"target_idx" integer NOT NULL,
	"sample" integer NOT NULL,
	"text" text,
	"finish_reason" text,
	"error" text,
	"scores" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "eval_results_run_id_example_idx_target_idx_sample_pk" PRIMARY KEY("run_id","example_idx","target_idx","sample")
);
--> statement-breakpoint
CREATE TABLE "eval_run_events" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"type" text NOT NULL,
	"message" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"entity_id" uuid NOT NULL,
	"eval_set_id" uuid NOT NULL,
	"name" text,
	"status" text DEFAULT 'QUEUED' NOT NULL,
	"error" text,
	"targets" jsonb NOT NULL,
	"scorers" jsonb NOT NULL,
	"sampling" jsonb NOT NULL,
	"n" integer NOT NULL,
	"progress_done" integer DEFAULT 0 NOT NULL,
	"progress_total" integer NOT NULL,
	"summary" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" uuid,
	"auto_model_id" uuid,
	"auto_step" integer,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "eval_sets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"entity_id" uuid NOT NULL,
	"project" text NOT NULL,
	"name" text NOT NULL,
	"version" integer NOT NULL,
	"num_examples" integer NOT NULL,
	"sha256" text NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "auto_eval" jsonb;--> statement-breakpoint
ALTER TABLE "eval_examples" ADD CONSTRAINT "eval_examples_set_id_eval_sets_id_fk" FOREIGN KEY ("set_id") REFERENCES "public"."eval_sets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_results" ADD CONSTRAINT "eval_results_run_id_eval_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."eval_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_run_events" ADD CONSTRAINT "eval_run_events_run_id_eval_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."eval_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_entity_id_entities_id_fk" FOREIGN KEY ("entity_id") REFERENCES "public"."entities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_eval_set_id_eval_sets_id_fk" FOREIGN KEY ("eval_set_id") REFERENCES "public"."eval_sets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_sets" ADD CONSTRAINT "eval_sets_entity_id_entities_id_fk" FOREIGN KEY ("entity_id") REFERENCES "public"."entities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_sets" ADD CONSTRAINT "eval_sets_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "eval_run_events_run_seq_idx" ON "eval_run_events" USING btree ("run_id","seq");--> statement-breakpoint
CREATE INDEX "eval_runs_entity_created_idx" ON "eval_runs" USING btree ("entity_id","created_at","id");--> statement-breakpoint
CREATE INDEX "eval_runs_set_idx" ON "eval_runs" USING btree ("eval_set_id");--> statement-breakpoint
CREATE INDEX "eval_runs_open_idx" ON "eval_runs" USING btree ("created_at") WHERE "eval_runs"."status" in ('QUEUED', 'RUNNING');--> statement-breakpoint
CREATE UNIQUE INDEX "eval_runs_auto_key" ON "eval_runs" USING btree ("auto_model_id","auto_step") WHERE "eval_runs"."auto_model_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "eval_sets_name_version_key" ON "eval_sets" USING btree ("entity_id","project","name","version");--> statement-breakpoint
CREATE INDEX "eval_sets_entity_created_idx" ON "eval_sets" USING btree ("entity_id","created_at","id");