-- The SQL ledger's table (myr-gateway/sql) on MySQL and MariaDB: SqlLedger.schemaSql('mysql').
-- The key's collation must stay utf8mb4_bin: keys that differ only by case are different payments.
CREATE TABLE IF NOT EXISTS myr_webhook_ledger (ledger_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, mark_rank SMALLINT NULL, handled_statuses SMALLINT NOT NULL DEFAULT 0, expires_at BIGINT NOT NULL, claim_id BIGINT NULL, INDEX expires_at_idx (expires_at)) ENGINE=InnoDB;
