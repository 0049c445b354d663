-- The SQL ledger's table (myr-gateway/sql) on PostgreSQL: SqlLedger.schemaSql('postgres').
-- Run it with your migrations (Kysely, node-pg-migrate, Flyway, psql) before the first callback.
CREATE TABLE IF NOT EXISTS myr_webhook_ledger (ledger_key VARCHAR(255) PRIMARY KEY, mark_rank SMALLINT, handled_statuses SMALLINT NOT NULL DEFAULT 0, expires_at BIGINT NOT NULL, claim_id BIGINT);
CREATE INDEX IF NOT EXISTS myr_webhook_ledger_expires ON myr_webhook_ledger (expires_at);
