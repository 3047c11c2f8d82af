-- Programs a scan met that the ledger's program registry does not know
-- and that are not the runtime's own (issue 22): the transactions that ran
-- them were read the conservative way (balance changes only), and get_job
-- lists them so nothing is silently guessed. One row per job and program,
-- with how many of the transactions the job wrote ran it.
CREATE TABLE job_unknown_programs (
    job_id       TEXT NOT NULL,
    program      TEXT NOT NULL,
    transactions BIGINT NOT NULL,
    PRIMARY KEY (job_id, program)
);
