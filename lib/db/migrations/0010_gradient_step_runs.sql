DROP INDEX "runs_model_key";--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "gradient_steps" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "kind" text DEFAULT 'checkpoints' NOT NULL;--> statement-breakpoint
ALTER TABLE "training_jobs" ADD COLUMN "first_gradient_x" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "runs_model_kind_key" ON "runs" USING btree ("model_id","kind");--> statement-breakpoint
-- Backfill every model's training curve from the gradient_step events already stored: x = the event's position
-- among all of the model's gradient steps (jobs of a model run one at a time, so event order is job order).
INSERT INTO "runs" ("id", "model_id", "kind")
SELECT DISTINCT m."id"::text || ':gradient-steps', m."id", 'gradient_steps'
FROM "job_events" e JOIN "training_jobs" j ON j."id" = e."job_id" JOIN "models" m ON m."id" = j."model_id"
WHERE e."type" = 'gradient_step';--> statement-breakpoint
INSERT INTO "run_metrics" ("run_id", "name", "step", "value")
SELECT x."model_id"::text || ':gradient-steps', kv."key", x."x", (kv."value" #>> '{}')::float8
FROM (
	SELECT j."model_id", e."data", row_number() OVER (PARTITION BY j."model_id" ORDER BY e."seq")::int AS "x"
	FROM "job_events" e JOIN "training_jobs" j ON j."id" = e."job_id" JOIN "models" m ON m."id" = j."model_id"
	WHERE e."type" = 'gradient_step'
) x CROSS JOIN LATERAL jsonb_each(x."data") kv
WHERE jsonb_typeof(kv."value") = 'number';--> statement-breakpoint
INSERT INTO "run_metric_rollups" ("run_id", "width", "name", "bucket", "n", "first_step", "first_value", "min_step", "min_value", "max_step", "max_value", "last_step", "last_value")
SELECT m."run_id", w."width", m."name", m."step" / w."width", count(*)::int,
	min(m."step"), (min(ARRAY[m."step"::float8, m."value"]))[2],
	(min(ARRAY[m."value", m."step"::float8]))[2]::int, min(m."value"),
	(max(ARRAY[m."value", -m."step"::float8]))[2]::int * -1, max(m."value"),
	max(m."step"), (max(ARRAY[m."step"::float8, m."value"]))[2]
FROM "run_metrics" m CROSS JOIN (VALUES (8), (64), (512), (4096)) AS w("width")
WHERE m."run_id" IN (SELECT "id" FROM "runs" WHERE "kind" = 'gradient_steps')
GROUP BY m."run_id", w."width", m."name", m."step" / w."width";--> statement-breakpoint
UPDATE "training_jobs" t SET "first_gradient_x" = f."x0"
FROM (
	SELECT x."job_id", min(x."x") - 1 AS "x0"
	FROM (
		SELECT e."job_id", row_number() OVER (PARTITION BY j."model_id" ORDER BY e."seq")::int AS "x"
		FROM "job_events" e JOIN "training_jobs" j ON j."id" = e."job_id" JOIN "models" m ON m."id" = j."model_id"
		WHERE e."type" = 'gradient_step'
	) x GROUP BY x."job_id"
) f WHERE t."id" = f."job_id";--> statement-breakpoint
UPDATE "models" m SET "gradient_steps" = c."n"
FROM (
	SELECT j."model_id", count(*)::int AS "n"
	FROM "job_events" e JOIN "training_jobs" j ON j."id" = e."job_id"
	WHERE e."type" = 'gradient_step'
	GROUP BY j."model_id"
) c WHERE m."id" = c."model_id";
