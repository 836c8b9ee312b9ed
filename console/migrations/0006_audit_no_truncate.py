"""TRUNCATE skips row triggers, so the append-only audit refuses it with a statement trigger too.

The one way through is the session setting ``dlo.allow_audit_truncate = on``, which only the
test suite sets (tests/conftest.py), because the test runner empties every table between
browser tests. A role that owns the table can drop triggers anyway: these guard against
mistakes and careless scripts; a separate database role without ownership guards against malice.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION console_audit_no_truncate() RETURNS trigger AS $$
BEGIN
    IF current_setting('dlo.allow_audit_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'the audit is append-only: TRUNCATE of console_auditevent is refused'
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER console_audit_no_truncate
    BEFORE TRUNCATE ON console_auditevent
    FOR EACH STATEMENT EXECUTE FUNCTION console_audit_no_truncate();
"""

DROP = """
DROP TRIGGER IF EXISTS console_audit_no_truncate ON console_auditevent;
DROP FUNCTION IF EXISTS console_audit_no_truncate();
"""


class Migration(migrations.Migration):
    dependencies = [("console", "0005_job_approval")]
    operations = [migrations.RunSQL(CREATE, DROP)]
