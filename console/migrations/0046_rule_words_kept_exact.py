"""Rules' words read as the letters' filters read them (console.services.match_words): ``origin``,
``reason`` and a header's value now find a part of the text in any case, where they were exact.
A saved rule keeps what it took: its words are quoted ("orders"), which is exact in the new
reading, in the rule and in each of its versions. The change is audited once
(``rule.words_quoted``), naming the rules.

The audit row is written by the console's own audit service (its hash chain): this migration
needs the audit's tables as they are at this point, which it depends on."""

from django.db import migrations

WORDS = ("origin", "reason")


def _quoted(match):
    changed = dict(match)
    for key in WORDS:
        value = changed.get(key)
        if isinstance(value, str) and value and not (len(value) >= 2 and value[0] == value[-1] == '"'):
            changed[key] = f'"{value}"'
    header = changed.get("header")
    if isinstance(header, dict) and isinstance(header.get("value"), str) and header["value"] and not (
            len(header["value"]) >= 2 and header["value"][0] == header["value"][-1] == '"'):
        changed["header"] = {**header, "value": f'"{header["value"]}"'}
    return changed


def keep_exact(apps, schema_editor):
    Rule = apps.get_model("console", "Rule")
    RuleVersion = apps.get_model("console", "RuleVersion")
    rewritten = []
    for model in (Rule, RuleVersion):
        for row in model.objects.all().only("pk", "match"):
            match = _quoted(row.match or {})
            if match != (row.match or {}):
                row.match = match
                row.save(update_fields=["match"])
                if model is Rule:
                    rewritten.append(row.pk)
    if rewritten:
        from console.services import audit

        audit.record("rule.words_quoted", actor="migration 0046",
                     reason="rules' words now find a part in any case; saved words quoted to stay exact",
                     count=len(rewritten), details={"rules": sorted(rewritten), "words": [*WORDS, "header.value"]})


class Migration(migrations.Migration):
    dependencies = [("console", "0045_job_partly_failed_and_refused")]

    operations = [migrations.RunPython(keep_exact, migrations.RunPython.noop)]
