CREATE TABLE "ab_votes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"model_id" uuid NOT NULL,
	"a_step" integer NOT NULL,
	"b_step" integer NOT NULL,
	"winner" text NOT NULL,
	"prompt" text NOT NULL,
	"voter_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ab_votes" ADD CONSTRAINT "ab_votes_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ab_votes" ADD CONSTRAINT "ab_votes_voter_id_users_id_fk" FOREIGN KEY ("voter_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ab_votes_model_idx" ON "ab_votes" USING btree ("model_id","created_at");