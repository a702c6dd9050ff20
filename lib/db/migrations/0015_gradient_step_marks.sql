CREATE TABLE "gradient_step_marks" (
	"model_id" uuid NOT NULL,
	"x" integer NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL,
	"tokens" double precision NOT NULL,
	CONSTRAINT "gradient_step_marks_model_id_x_pk" PRIMARY KEY("model_id","x")
);
--> statement-breakpoint
ALTER TABLE "gradient_step_marks" ADD CONSTRAINT "gradient_step_marks_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Backfill the curves recorded before this table: each x's time is when its points were stored (run_metrics rows of
-- the gradient_steps run are written once, with their job's events), its tokens the running sum of the curve's
-- num_trainable_tokens (0 at a point that had none).
INSERT INTO "gradient_step_marks" ("model_id", "x", "recorded_at", "tokens")
SELECT r."model_id", m."step", min(m."created_at"),
  sum(sum(CASE WHEN m."name" = 'num_trainable_tokens' THEN m."value" ELSE 0 END))
    OVER (PARTITION BY r."model_id" ORDER BY m."step")
FROM "run_metrics" m JOIN "runs" r ON r."id" = m."run_id"
WHERE r."kind" = 'gradient_steps'
GROUP BY r."model_id", m."step";
