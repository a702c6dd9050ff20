ALTER TABLE "models" ADD COLUMN "checkpoint_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The count is kept by the database, per statement (a job's commit or a bulk seed is one update per model), so
-- that no writer, script or test can leave it wrong.
CREATE FUNCTION "checkpoints_count_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "models" m SET "checkpoint_count" = m."checkpoint_count" + d.n
    FROM (SELECT "model_id", count(*)::int AS n FROM inserted GROUP BY "model_id") d
   WHERE m."id" = d."model_id";
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "checkpoints_count_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "models" m SET "checkpoint_count" = m."checkpoint_count" - d.n
    FROM (SELECT "model_id", count(*)::int AS n FROM deleted GROUP BY "model_id") d
   WHERE m."id" = d."model_id";
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "checkpoints_count_inserted" AFTER INSERT ON "checkpoints"
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION "checkpoints_count_inserted"();--> statement-breakpoint
CREATE TRIGGER "checkpoints_count_deleted" AFTER DELETE ON "checkpoints"
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION "checkpoints_count_deleted"();--> statement-breakpoint
UPDATE "models" m SET "checkpoint_count" = (SELECT count(*) FROM "checkpoints" c WHERE c."model_id" = m."id");
