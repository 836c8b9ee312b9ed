"""The application may only append to the audit: UPDATE and DELETE are refused by the database."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION console_audit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit is append-only: % on console_auditevent is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER console_audit_append_only
    BEFORE UPDATE OR DELETE ON console_auditevent
    FOR EACH ROW EXECUTE FUNCTION console_audit_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS console_audit_append_only ON console_auditevent;
DROP FUNCTION IF EXISTS console_audit_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("console", "0001_initial")]
    operations = [migrations.RunSQL(CREATE, DROP)]
