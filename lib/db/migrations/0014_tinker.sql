CREATE TABLE "tinker_archive_links" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"weights_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tinker_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"entity_id" uuid NOT NULL,
	"model_id" uuid,
	"sampling_session_id" uuid,
	"seq_id" integer,
	"seq_assigned" integer DEFAULT 0 NOT NULL,
	"kind" text NOT NULL,
	"idempotency_key" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"payload" json,
	"result" json,
	"error" text,
	"error_category" text,
	"worker_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "tinker_sampling_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"session_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"entity_id" uuid NOT NULL,
	"base_model" text NOT NULL,
	"model_id" uuid,
	"checkpoint_id" uuid,
	"model_path" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tinker_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"entity_id" uuid NOT NULL,
	"user_id" uuid,
	"project_id" uuid NOT NULL,
	"sdk_version" text NOT NULL,
	"tags" jsonb NOT NULL,
	"user_metadata" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "tinker_training_clients" (
	"model_id" uuid PRIMARY KEY NOT NULL,
	"session_id" uuid NOT NULL,
	"model_seq_id" integer NOT NULL,
	"base_model" text NOT NULL,
	"lora" jsonb NOT NULL,
	"status" text DEFAULT 'waiting' NOT NULL,
	"worker_id" text,
	"error" text,
	"error_category" text,
	"next_seq" integer DEFAULT 1 NOT NULL,
	"gap_since" timestamp with time zone,
	"optim_steps" integer DEFAULT 0 NOT NULL,
	"pending_stats" jsonb,
	"last_metrics" jsonb,
	"user_metadata" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_request_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "tinker_weights" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"model_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"checkpoint_id" uuid,
	"prefix" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"ephemeral" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "tinker_archive_links" ADD CONSTRAINT "tinker_archive_links_weights_id_tinker_weights_id_fk" FOREIGN KEY ("weights_id") REFERENCES "public"."tinker_weights"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_requests" ADD CONSTRAINT "tinker_requests_entity_id_entities_id_fk" FOREIGN KEY ("entity_id") REFERENCES "public"."entities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_sampling_sessions" ADD CONSTRAINT "tinker_sampling_sessions_session_id_tinker_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."tinker_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_sampling_sessions" ADD CONSTRAINT "tinker_sampling_sessions_entity_id_entities_id_fk" FOREIGN KEY ("entity_id") REFERENCES "public"."entities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_sampling_sessions" ADD CONSTRAINT "tinker_sampling_sessions_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_sampling_sessions" ADD CONSTRAINT "tinker_sampling_sessions_checkpoint_id_checkpoints_id_fk" FOREIGN KEY ("checkpoint_id") REFERENCES "public"."checkpoints"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_sessions" ADD CONSTRAINT "tinker_sessions_entity_id_entities_id_fk" FOREIGN KEY ("entity_id") REFERENCES "public"."entities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_sessions" ADD CONSTRAINT "tinker_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_sessions" ADD CONSTRAINT "tinker_sessions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_training_clients" ADD CONSTRAINT "tinker_training_clients_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_training_clients" ADD CONSTRAINT "tinker_training_clients_session_id_tinker_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."tinker_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_weights" ADD CONSTRAINT "tinker_weights_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tinker_weights" ADD CONSTRAINT "tinker_weights_checkpoint_id_checkpoints_id_fk" FOREIGN KEY ("checkpoint_id") REFERENCES "public"."checkpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "tinker_requests_model_seq_key" ON "tinker_requests" USING btree ("model_id","seq_id") WHERE "tinker_requests"."seq_id" is not null and "tinker_requests"."model_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "tinker_requests_sampling_seq_key" ON "tinker_requests" USING btree ("sampling_session_id","seq_id") WHERE "tinker_requests"."seq_id" is not null and "tinker_requests"."sampling_session_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "tinker_requests_idempotency_key" ON "tinker_requests" USING btree ("entity_id","idempotency_key") WHERE "tinker_requests"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "tinker_requests_model_open_idx" ON "tinker_requests" USING btree ("model_id","seq_id") WHERE "tinker_requests"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "tinker_requests_create_queued_idx" ON "tinker_requests" USING btree ("created_at") WHERE "tinker_requests"."kind" = 'create_model' and "tinker_requests"."status" = 'queued';--> statement-breakpoint
CREATE INDEX "tinker_requests_finished_idx" ON "tinker_requests" USING btree ("finished_at");--> statement-breakpoint
CREATE UNIQUE INDEX "tinker_sampling_sessions_session_seq_key" ON "tinker_sampling_sessions" USING btree ("session_id","seq");--> statement-breakpoint
CREATE INDEX "tinker_sessions_open_idx" ON "tinker_sessions" USING btree ("heartbeat_at") WHERE "tinker_sessions"."ended_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "tinker_training_clients_session_seq_key" ON "tinker_training_clients" USING btree ("session_id","model_seq_id");--> statement-breakpoint
CREATE INDEX "tinker_training_clients_worker_idx" ON "tinker_training_clients" USING btree ("worker_id");--> statement-breakpoint
CREATE INDEX "tinker_training_clients_status_idx" ON "tinker_training_clients" USING btree ("status");--> statement-breakpoint
CREATE UNIQUE INDEX "tinker_weights_model_kind_name_key" ON "tinker_weights" USING btree ("model_id","kind","name");--> statement-breakpoint
CREATE INDEX "tinker_weights_expires_idx" ON "tinker_weights" USING btree ("expires_at") WHERE "tinker_weights"."expires_at" is not null;