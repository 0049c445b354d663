-- The SQL ledger's table (myr-gateway/sql) on SQLite: SqlLedger.schemaSql('sqlite').
CREATE TABLE IF NOT EXISTS myr_webhook_ledger (ledger_key TEXT NOT NULL PRIMARY KEY, mark_rank INTEGER, handled_statuses INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL, claim_id INTEGER);
CREATE INDEX IF NOT EXISTS myr_webhook_ledger_expires ON myr_webhook_ledger (expires_at);
