CREATE TABLE "run_metric_rollups" (
	"run_id" text NOT NULL,
	"width" integer NOT NULL,
	"name" text NOT NULL,
	"bucket" integer NOT NULL,
	"n" integer NOT NULL,
	"first_step" integer NOT NULL,
	"first_value" double precision NOT NULL,
	"min_step" integer NOT NULL,
	"min_value" double precision NOT NULL,
	"max_step" integer NOT NULL,
	"max_value" double precision NOT NULL,
	"last_step" integer NOT NULL,
	"last_value" double precision NOT NULL,
	CONSTRAINT "run_metric_rollups_run_id_width_name_bucket_pk" PRIMARY KEY("run_id","width","name","bucket")
);
--> statement-breakpoint
ALTER TABLE "run_metric_rollups" ADD CONSTRAINT "run_metric_rollups_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Backfill from the points already stored. min()/max() over [value, step] arrays pick the step of the lowest
-- and highest value, and over [step, value] the first and last point, in one pass per bucket.
INSERT INTO "run_metric_rollups" ("run_id", "width", "name", "bucket", "n", "first_step", "first_value", "min_step", "min_value", "max_step", "max_value", "last_step", "last_value")
SELECT m."run_id", w."width", m."name", m."step" / w."width", count(*)::int,
	min(m."step"), (min(ARRAY[m."step"::float8, m."value"]))[2],
	(min(ARRAY[m."value", m."step"::float8]))[2]::int, min(m."value"),
	(max(ARRAY[m."value", -m."step"::float8]))[2]::int * -1, max(m."value"),
	max(m."step"), (max(ARRAY[m."step"::float8, m."value"]))[2]
FROM "run_metrics" m CROSS JOIN (VALUES (8), (64), (512), (4096)) AS w("width")
GROUP BY m."run_id", w."width", m."name", m."step" / w."width";
