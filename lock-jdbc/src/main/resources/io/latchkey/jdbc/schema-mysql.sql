-- Latchkey's tables on MySQL 8 (namespace "latchkey"; another namespace replaces the "latchkey_" prefix).
-- Latchkey creates them on first use when its user may; otherwise run this once (Flyway, Liquibase, the mysql client).
-- Times are milliseconds since the epoch by the database's clock; no client clock is ever stored.

-- One row per name and kind (L lock, S semaphore, W read-write lock), kept after release: the fencing
-- token counter. A lock's grant lives in it too; a semaphore's holds its number of permits and a
-- read-write lock's the writer that waits.
CREATE TABLE IF NOT EXISTS latchkey_names (
    kind CHAR(1) NOT NULL,
    name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin NOT NULL,
    token BIGINT NOT NULL,
    owner VARCHAR(64),
    expires_ms BIGINT,
    holder TEXT CHARACTER SET utf8mb4,
    since_ms BIGINT,
    permits INTEGER,
    last_slot VARCHAR(40),
    waiting_writer VARCHAR(64),
    waiting_until_ms BIGINT,
    PRIMARY KEY (kind, name),
    INDEX latchkey_names_owner (owner)
) ENGINE=InnoDB;

-- One row per held permit (S), reader (R) or writer (W), deleted on release or expiry.
CREATE TABLE IF NOT EXISTS latchkey_holders (
    kind CHAR(1) NOT NULL,
    name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin NOT NULL,
    slot BIGINT NOT NULL,
    owner VARCHAR(64) NOT NULL,
    token BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    holder TEXT CHARACTER SET utf8mb4,
    since_ms BIGINT NOT NULL,
    PRIMARY KEY (kind, name, slot),
    INDEX latchkey_holders_owner (owner)
) ENGINE=InnoDB;
