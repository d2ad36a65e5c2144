#!/usr/bin/env python3
"""json_schema_check.py -- check that a file holds exactly one JSON document valid against a schema.

Usage: json_schema_check.py SCHEMA [FILE]   (FILE "-" or absent: stdin)

Python standard library only.  It implements the subset of JSON Schema
(draft 2020-12) that docs/schemas/*.schema.json use, and refuses a schema
that uses any other keyword, so a schema can never be checked more loosely
than it reads:

  type (a name or a list; "integer" excludes booleans and floats, "number"
  excludes booleans), enum, const, properties, required,
  additionalProperties (false or a schema), items, minItems, maxItems,
  minimum, maximum, minLength, pattern (re.search), anyOf, oneOf, and
  $ref to "#/$defs/NAME".  Annotations ($schema, $id, title, description,
  $comment, $defs) are read and not checked.

The document itself must be strict JSON: one value and nothing after it,
no NaN or Infinity, no duplicate keys.  Exit status: 0 valid, 1 invalid
(each problem on stderr with its JSON path), 2 usage or a bad schema.
"""
import json
import re
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment", "$defs"}
KEYWORDS = {"type", "enum", "const", "properties", "required", "additionalProperties",
            "items", "minItems", "maxItems", "minimum", "maximum", "minLength", "pattern",
            "anyOf", "oneOf", "$ref"}


class SchemaError(Exception):
    pass


def strict_loads(text):
    def no_constant(name):
        raise ValueError("%s is not JSON" % name)

    def no_duplicates(pairs):
        seen = {}
        for k, v in pairs:
            if k in seen:
                raise ValueError("duplicate key %r" % k)
            seen[k] = v
        return seen

    return json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)


def type_ok(value, name):
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise SchemaError("unknown type %r" % name)


class Checker:
    def __init__(self, root):
        self.root = root

    def resolve(self, ref):
        if not ref.startswith("#/$defs/"):
            raise SchemaError("only #/$defs/NAME references are supported, not %r" % ref)
        name = ref[len("#/$defs/"):]
        try:
            return self.root["$defs"][name]
        except KeyError:
            raise SchemaError("$ref %r names nothing" % ref)

    def errors(self, value, schema, path):
        """Every problem of value against schema, as 'PATH: what' strings."""
        if not isinstance(schema, dict):
            raise SchemaError("%s: a schema must be an object" % path)
        unknown = set(schema) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise SchemaError("%s: keywords this checker does not implement: %s"
                              % (path, ", ".join(sorted(unknown))))
        out = []
        if "$ref" in schema:
            out += self.errors(value, self.resolve(schema["$ref"]), path)
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(type_ok(value, n) for n in names):
                return out + ["%s: %s is not of type %s" % (path, json.dumps(value)[:80],
                                                            " or ".join(names))]
        if "enum" in schema and not any(value == e and type(value) is type(e) for e in schema["enum"]):
            out.append("%s: %s is not one of %s" % (path, json.dumps(value)[:80],
                                                    json.dumps(schema["enum"])))
        if "const" in schema and not (value == schema["const"]
                                      and type(value) is type(schema["const"])):
            out.append("%s: %s is not %s" % (path, json.dumps(value)[:80],
                                             json.dumps(schema["const"])))
        if isinstance(value, str):
            if "minLength" in schema and len(value) < schema["minLength"]:
                out.append("%s: shorter than %d characters" % (path, schema["minLength"]))
            if "pattern" in schema and not re.search(schema["pattern"], value):
                out.append("%s: %r does not match %s" % (path, value[:80], schema["pattern"]))
        if type_ok(value, "number"):
            if "minimum" in schema and value < schema["minimum"]:
                out.append("%s: %r is below %r" % (path, value, schema["minimum"]))
            if "maximum" in schema and value > schema["maximum"]:
                out.append("%s: %r is above %r" % (path, value, schema["maximum"]))
        if isinstance(value, list):
            if "minItems" in schema and len(value) < schema["minItems"]:
                out.append("%s: fewer than %d items" % (path, schema["minItems"]))
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                out.append("%s: more than %d items" % (path, schema["maxItems"]))
            if "items" in schema:
                for i, item in enumerate(value):
                    out += self.errors(item, schema["items"], "%s[%d]" % (path, i))
        if isinstance(value, dict):
            props = schema.get("properties", {})
            for key in schema.get("required", []):
                if key not in value:
                    out.append("%s: required member %r is missing" % (path, key))
            for key, member in value.items():
                sub = "%s.%s" % (path, key)
                if key in props:
                    out += self.errors(member, props[key], sub)
                elif "additionalProperties" in schema:
                    extra = schema["additionalProperties"]
                    if extra is False:
                        out.append("%s: member %r is not allowed" % (path, key))
                    elif extra is not True:
                        out += self.errors(member, extra, sub)
        if "anyOf" in schema:
            if all(self.errors(value, s, path) for s in schema["anyOf"]):
                out.append("%s: %s matches none of anyOf" % (path, json.dumps(value)[:80]))
        if "oneOf" in schema:
            n = sum(1 for s in schema["oneOf"] if not self.errors(value, s, path))
            if n != 1:
                out.append("%s: matches %d of oneOf, not exactly 1" % (path, n))
        return out


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write("usage: json_schema_check.py SCHEMA [FILE|-]\n")
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            schema = strict_loads(f.read())
    except (OSError, ValueError) as e:
        sys.stderr.write("json_schema_check: cannot read the schema %s: %s\n" % (argv[1], e))
        return 2
    try:
        if len(argv) == 3 and argv[2] != "-":
            with open(argv[2], "rb") as f:
                raw = f.read()
        else:
            raw = sys.stdin.buffer.read()
        doc = strict_loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        sys.stderr.write("json_schema_check: not one strict JSON document: %s\n" % e)
        return 1
    try:
        problems = Checker(schema).errors(doc, schema, "$")
    except SchemaError as e:
        sys.stderr.write("json_schema_check: the schema %s: %s\n" % (argv[1], e))
        return 2
    for p in problems:
        sys.stderr.write("json_schema_check: %s\n" % p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
