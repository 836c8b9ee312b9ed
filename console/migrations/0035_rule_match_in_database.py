"""A rule's body path is read by PostgreSQL (console.services.rules.matching), not by loading
every body in scope into Python: four IMMUTABLE functions evaluated in the query (PARALLEL SAFE
but the first, PARALLEL UNSAFE: its exception block starts a subtransaction, which neither a
parallel worker nor the leader of a parallel plan may start; RESTRICTED was not enough, a
query whose plan gathered a parallel scan failed with "cannot start subtransactions during a
parallel operation"),
so capture writes nothing more (no column, no index, no trigger: issue 32 wants capture fast,
and the letters table has ten indexes already).

- ``console_body_json(body)``: the body as jsonb, or NULL when it is not JSON as
  console.letters.bounded_json reads it: longer than 8 MiB, nested deeper than 64, not UTF-8
  (a UTF-8 byte order mark is skipped), or not a document jsonb takes.
- ``console_json_at(doc, steps, indexes)``: the value at a path of path_steps() (console.services.
  rules.spec), walked as Python walked it: an index into a list, else a key of an object (an
  index is a key "0" of an object; ``#>`` would also take "-1" as an index).
- ``console_py_text(value)``: a JSON scalar as Python's ``str()`` says it after ``json.loads``
  ("None", "True", "False", ``repr`` of a float, the digits of an int).
- ``console_py_equals(value, wanted)``: the equality of a rule's body path as it was in Python
  (``value == wanted``, or a scalar whose text equals a wanted string).
"""

from django.db import migrations

MAX_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64

FUNCTIONS = f"""
CREATE FUNCTION console_body_json(body bytea) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL UNSAFE COST 1000 AS $$
DECLARE
    raw bytea := body;
    doc text;
    parsed jsonb;
BEGIN
    IF octet_length(raw) > {MAX_BYTES} THEN
        RETURN NULL;
    END IF;
    IF substring(raw FROM 1 FOR 3) = '\\xefbbbf'::bytea THEN
        raw := substring(raw FROM 4);
    END IF;
    -- Most bodies that are not JSON say so at their first byte, before the dearer block below.
    IF ltrim(encode(substring(raw FROM 1 FOR 64), 'escape'), E' \\t\\r\\n') ~ '^[^\\[{{"0-9tfn-]' THEN
        RETURN NULL;
    END IF;
    BEGIN
        doc := convert_from(raw, 'UTF8');
        parsed := doc::jsonb;
    EXCEPTION WHEN others THEN  -- not UTF-8, not JSON, or more than jsonb takes
        RETURN NULL;
    END;
    -- Deeper than {MAX_DEPTH}: only a document with that many brackets can be.
    IF length(doc) - length(translate(doc, '[{{', '')) > {MAX_DEPTH}
       AND jsonb_path_exists(parsed, 'strict $.**{{{MAX_DEPTH}}} ? (@.type() == "array" || @.type() == "object")') THEN
        RETURN NULL;
    END IF;
    RETURN parsed;
END $$;

CREATE FUNCTION console_json_at(doc jsonb, steps text[], indexes integer[]) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    here jsonb := doc;
BEGIN
    FOR i IN 1 .. coalesce(array_length(steps, 1), 0) LOOP
        IF indexes[i] IS NOT NULL AND jsonb_typeof(here) = 'array' THEN
            here := here -> indexes[i];
        ELSIF jsonb_typeof(here) = 'object' THEN
            here := here -> steps[i];
        ELSE
            RETURN NULL;
        END IF;
        IF here IS NULL THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN here;
END $$;

CREATE FUNCTION console_py_text(value jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET extra_float_digits = 1 AS $$
DECLARE
    t text;
    shortest text;
    sign text := '';
    digits text;
    exp10 integer;
    parts text[];
BEGIN
    CASE jsonb_typeof(value)
        WHEN 'string' THEN RETURN value #>> '{{}}';
        WHEN 'null' THEN RETURN 'None';
        WHEN 'boolean' THEN RETURN CASE WHEN value = 'true'::jsonb THEN 'True' ELSE 'False' END;
        WHEN 'number' THEN NULL;
        ELSE RETURN NULL;
    END CASE;
    t := value::text;
    IF t !~ '[.eE]' THEN
        RETURN t;  -- an int: numeric prints its digits as Python does
    END IF;
    -- A float: Python's repr, from the shortest digits that read back as the same double.
    IF abs(value::numeric) > 1e308 OR (value::numeric <> 0 AND abs(value::numeric) < 1e-307) THEN
        RETURN NULL;  -- out of a double's range (Python reads inf or a subnormal): no match
    END IF;
    shortest := (value::numeric)::float8::text;
    IF left(shortest, 1) = '-' THEN
        sign := '-';
        shortest := substr(shortest, 2);
    END IF;
    IF shortest = '0' THEN
        RETURN sign || '0.0';
    END IF;
    IF shortest LIKE '%e%' THEN
        parts := string_to_array(shortest, 'e');
        digits := replace(parts[1], '.', '');
        exp10 := parts[2]::integer;
    ELSIF shortest LIKE '0.%' THEN
        digits := ltrim(substr(shortest, 3), '0');
        exp10 := -(length(substr(shortest, 3)) - length(digits)) - 1;
    ELSE
        exp10 := length(split_part(shortest, '.', 1)) - 1;
        digits := replace(shortest, '.', '');
    END IF;
    digits := rtrim(digits, '0');
    IF exp10 < -4 OR exp10 >= 16 THEN
        RETURN sign || left(digits, 1) || CASE WHEN length(digits) > 1 THEN '.' || substr(digits, 2) ELSE '' END
               || 'e' || CASE WHEN exp10 < 0 THEN '-' ELSE '+' END || lpad(abs(exp10)::text, 2, '0');
    END IF;
    IF exp10 < 0 THEN
        RETURN sign || '0.' || repeat('0', -exp10 - 1) || digits;
    END IF;
    IF length(digits) < exp10 + 1 THEN
        digits := rpad(digits, exp10 + 1, '0');
    END IF;
    RETURN sign || left(digits, exp10 + 1) || '.' || coalesce(nullif(substr(digits, exp10 + 2), ''), '0');
END $$;

CREATE FUNCTION console_py_equals(value jsonb, wanted jsonb) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF value IS NULL THEN
        RETURN false;  -- the path is not in the document
    END IF;
    IF jsonb_typeof(wanted) = 'string' THEN
        RETURN coalesce(console_py_text(value) = wanted #>> '{{}}', false);
    END IF;
    IF jsonb_typeof(wanted) IN ('number', 'boolean') AND jsonb_typeof(value) IN ('number', 'boolean') THEN
        -- Python: True == 1 and False == 0.0
        RETURN (CASE WHEN jsonb_typeof(value) = 'boolean' THEN (value = 'true'::jsonb)::integer::numeric
                     ELSE value::numeric END)
             = (CASE WHEN jsonb_typeof(wanted) = 'boolean' THEN (wanted = 'true'::jsonb)::integer::numeric
                     ELSE wanted::numeric END);
    END IF;
    RETURN value = wanted;  -- null, lists and objects (numbers in them compared by value)
END $$;
"""

DROP = """
DROP FUNCTION console_py_equals(jsonb, jsonb);
DROP FUNCTION console_py_text(jsonb);
DROP FUNCTION console_json_at(jsonb, text[], integer[]);
DROP FUNCTION console_body_json(bytea);
"""


class Migration(migrations.Migration):

    dependencies = [("console", "0034_rule_inbox")]

    operations = [migrations.RunSQL(FUNCTIONS, reverse_sql=DROP)]
