"""Source manifests: one YAML file per registered source (``manifests/sources/*.yaml``)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

IDENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/#-]{0,159}$"
SCOPE_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
IDENT_RE = re.compile(IDENT_PATTERN)
SCOPE_RE = re.compile(SCOPE_PATTERN)
Ident = Annotated[str, StringConstraints(pattern=IDENT_PATTERN)]
Scope = Annotated[str, StringConstraints(pattern=SCOPE_PATTERN)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class TrustLevel(str, Enum):
    authoritative = "authoritative"
    operational = "operational"
    internal = "internal"
    user_supplied = "user_supplied"
    public = "public"
    untrusted = "untrusted"


class Classification(str, Enum):
    public = "public"
    internal = "internal"
    confidential = "confidential"
    restricted = "restricted"


# Clearance levels, lowest first: a subject cleared for a level reads sources classified at it
# or below. A subject that states no clearance is cleared for DEFAULT_CLEARANCE.
CLEARANCE_LEVELS = tuple(c.value for c in Classification)
DEFAULT_CLEARANCE = Classification.internal.value


def clearance_rank(level: str) -> int:
    """Position of a classification or clearance level (unknown levels rank above restricted)."""
    return CLEARANCE_LEVELS.index(level) if level in CLEARANCE_LEVELS else len(CLEARANCE_LEVELS)


class DeletionMode(str, Enum):
    tombstone = "tombstone"      # tombstones.jsonl removes objects and records the deletion
    none = "none"                # the source never deletes; a tombstone file is an error


class Parser(str, Enum):
    """The bundled parsers (load/parsers/); a plugin adds others (``ctx.parsers`` entry points)."""

    records = "records"          # objects.jsonl
    markdown = "markdown"        # *.md with YAML front matter, one object per section
    git = "git"                  # every version of the matched files of a git repository or bundle
    table = "table"              # rows of CSV/TSV, Parquet, JSON(L), Excel or SQLite, read by DuckDB
    json_export = "json-export"  # nested exports: one object per record and per nested item
    api = "api"                  # a live HTTP API: nothing at load, records fetched per investigation (ctxcli.live)


PARSER_VERSIONS = {Parser.records.value: {"1"}, Parser.markdown.value: {"1"}, Parser.git.value: {"1"},
                   Parser.table.value: {"1"}, Parser.json_export.value: {"1"}, Parser.api.value: {"1"}}
# A parser's name in a manifest and in the ``ctx.parsers`` entry-point group: a bundled one or a
# plugin's (whether it is installed is checked when the manifests are read: load/parse.py).
PARSER_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,63}$"

FactName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Spec = Annotated[str, StringConstraints(min_length=1, max_length=500)]


class FactSpec(Strict):
    """A typed fact: the value of ``from`` (a field name or a ``{field}`` template) as ``type``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    from_: Spec = Field(alias="from")
    type: Literal["str", "int", "float", "bool", "timestamp", "list"] = Field(
        "str", description="list: text split at ';' (items trimmed, empty ones dropped), or a list as read.")


class RelationMap(Strict):
    """A relation each record attests: from an entity key to another entity's key (templates over
    the record's fields); evidence is the record's object. A record whose fields are empty for
    either end attests nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    type: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
    from_: Spec = Field(alias="from")
    to: Spec
    confidence: float = Field(1.0, ge=0.0, le=1.0)


class EntityMap(Strict):
    """An entity each record declares (key, type and name templates)."""

    key: Spec
    type: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    name: Spec


class Mapping(Strict):
    """The source's own fields onto ctx's. Each value is a field name (``effective_date``) or a
    template (``"service:{service}"``; ``{f?}`` may be missing or empty, ``{f|text}`` gives a
    default; every name must be a field of some record of the source); ``set`` gives constants. Fields the mapping does not
    name keep their ctx meaning when the record has them under ctx's names (Markdown front matter);
    every other field of the record is ignored."""

    object_id: Spec | None = Field(None, description="Object id (a document's doc_id for Markdown and git).")
    title: Spec | None = None
    body: Spec | None = Field(None, description="Content template (tables, exports).")
    version: Spec | None = None
    object_type: Spec | None = None
    subject_id: Spec | None = None
    tenant_id: Spec | None = Field(None, description="A field naming each record's tenant (shared tables).")
    valid_from: Spec | None = None
    valid_to: Spec | None = None
    observed_at: Spec | None = None
    supersedes: Spec | None = None
    facts: dict[FactName, Spec | FactSpec] = Field(default_factory=dict)
    keys: list[Spec] = Field(default_factory=list, description="Business keys (templates); empty ones are skipped.")
    set: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")], Any] = Field(
        default_factory=dict, description="Constant ctx fields, e.g. {object_type: runbook}.")
    timezone: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        None, description="IANA zone for naive times (without it a naive time is an error).")
    entity: EntityMap | None = None
    relations: list[RelationMap] = Field(default_factory=list)

    @field_validator("timezone")
    @classmethod
    def _tzname(cls, v: str | None) -> str | None:
        if v is not None:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(v)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {v!r}") from None
        return v


class MarkdownOptions(Strict):
    split: Literal["h2", "headings"] = Field(
        "h2", description="h2: one object per '## ' section; headings: per heading of any level, "
                          "the heading path in the locator.")


class GitOptions(Strict):
    path: Annotated[str, StringConstraints(min_length=1, max_length=512)] = Field(
        ".", description="The repository folder or bundle file, inside the snapshot folder.")
    ref: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        None, description="Branch, tag or commit (default: HEAD, else the bundle's only head).")
    include: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = Field(
        default_factory=lambda: ["**/*.md"],
        description="Paths read: gitignore's patterns from the repository's root ('**' any folders, '*' and "
                    "'?' within one name, '[a-z]' a class, a folder's name everything under it).")
    exclude: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = Field(
        default_factory=list, description="Paths left out, in the same syntax.")
    version_ids: bool = Field(
        True, description="true: a version's objects are '<doc_id>@<short sha>#<section>'; false: "
                          "'<doc_id>#<section>', for front matter that names each version (object_id: "
                          "'{id}-{version}'): two versions with one id are then a duplicate.")


class RowGroups(Strict):
    """Wide or long tables: consecutive rows with equal ``by`` values (the group's primary key)
    become one object of at most ``rows`` rows — the first row's mapping (its object id with
    ``#rows-<a>-<b>``), the mapped body if any, then a header of the column names and one line per
    row, so every value keeps its column; the keys of every row of the group are its keys."""

    by: list[Annotated[str, StringConstraints(min_length=1, max_length=128)]] = Field(
        min_length=1, description="Key columns: a new group starts where any of them changes.")
    rows: int = Field(50, ge=1, le=10000, description="At most this many rows per object.")
    columns: list[Annotated[str, StringConstraints(min_length=1, max_length=128)]] = Field(
        default_factory=list, description="The columns of the header and of each row line (default: all, "
                                          "in the table's order).")


class TableOptions(Strict):
    file: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = Field(
        None, description="The file inside the snapshot folder (every format but postgres).")
    format: Literal["csv", "tsv", "parquet", "json", "jsonl", "excel", "sqlite", "postgres"] | None = Field(
        None, description="Default: from the file's extension.")
    database: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = Field(
        None, description="format postgres: the database's address (postgresql://user@host:port/db, or libpq "
                          "key=value pairs); the password comes from PGPASSFILE or the libpq environment, "
                          "never from the manifest.")
    sheet: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    table: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")] | None = None
    query: Annotated[str, StringConstraints(min_length=1, max_length=4000)] | None = Field(
        None, description="A read-only SELECT over the SQLite or PostgreSQL database's tables.")
    row_groups: RowGroups | None = None

    @model_validator(mode="after")
    def _where(self) -> "TableOptions":
        if self.format == "postgres":
            if self.database is None:
                raise ValueError("table.database: format postgres reads a database: give its address")
            if self.file is not None:
                raise ValueError("table.file: a PostgreSQL table has no file (table.database names the database)")
            from ..util.passwords import secret_keys

            held = secret_keys(self.database) or (["password"] if re.search(r"\bpassword\s*=", self.database, re.I)
                                                  else [])
            if held:
                raise ValueError(f"table.database: a manifest never holds a {held[0]} (use PGPASSFILE or the "
                                 "libpq environment)")
        else:
            if self.file is None:
                raise ValueError("table.file: missing (the file inside the snapshot folder)")
            if self.database is not None:
                raise ValueError("table.database: only for format postgres")
        return self


class Freshness(Strict):
    max_age: str = Field(description="Objects observed longer than this before as_of are stale, e.g. '30d'.")


class ValidTime(Strict):
    from_field: str = "valid_from"
    to_field: str = "valid_to"


class RedactionPattern(Strict):
    name: Ident
    regex: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    replacement: Annotated[str, StringConstraints(max_length=64)]


class Redaction(Strict):
    """Masks applied to an object's text before it enters a pack, unless the subject holds
    one of ``unless_scopes``. The policy that mandates it is cited by ``policy_object``."""

    unless_scopes: list[Scope] = Field(default_factory=list)
    patterns: list[RedactionPattern] = Field(min_length=1)
    policy_object: Ident | None = None


Selector = Annotated[str, StringConstraints(pattern=r"^(\$|[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)$")]


class NestedMap(Strict):
    """Items nested in each exported record (a list, or one object such as a root cause) at a
    dotted ``path``; each becomes an object mapped by ``mapping``, whose templates also see the
    parent's fields as ``{parent.<field>}``, its object id as ``{parent_id}`` and the item's
    position (from 1) as ``{index}``. Every item
    carries the fact ``parent_id`` (``parent_fact`` renames it, null leaves it out)."""

    path: Selector
    mapping: Mapping
    parent_fact: FactName | None = Field("parent_id", description="The fact naming the parent's object id "
                                                                  "(null: none).")


class JsonExportOptions(Strict):
    file: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    records: Selector = Field("$", description="Dotted path of the records' array ('$': the file is the array).")
    nested: list[NestedMap] = Field(default_factory=list)


PARAM_NAME = r"[a-z][a-z0-9_]{0,63}"


class ApiRequest(Strict):
    """One request template of a live API source: ``path`` is appended to the base URL with the
    investigation's parameters filled in (``{param.NAME}``, ``{case_id}``; each value
    percent-encoded). A request whose parameters the investigation does not give is not made."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,63}$")]
    path: Annotated[str, StringConstraints(pattern=r"^/[^\s#]{0,1000}$")] = Field(
        description="e.g. /tickets/{param.ticket} (a query string may follow ?).")
    records: Selector = Field("$", description="Dotted path of the records in the JSON response ('$': the "
                                               "response itself, an object or a list of objects).")

    @field_validator("path")
    @classmethod
    def _names(cls, v: str) -> str:
        for name in re.findall(r"\{([^{}]*)\}", v):
            if name != "case_id" and not re.fullmatch(r"param\." + PARAM_NAME, name):
                raise ValueError(f"path: {{{name}}} is not {{param.NAME}} or {{case_id}}")
        if re.sub(r"\{[^{}]*\}", "", v).count("{") or re.sub(r"\{[^{}]*\}", "", v).count("}"):
            raise ValueError("path: an unmatched brace")
        return v


class ApiOptions(Strict):
    """A live API (parser ``api``): where it is, how ctx authenticates, what it asks and how long
    it waits. Its host must be listed in ctx.toml ``[live] allowed_hosts``."""

    base_url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s/?#@]+(/[^\s?#@]*)?$")] = Field(
        description="http(s)://host[:port][/prefix]: no credentials, query or fragment.")
    auth_env: Annotated[str, StringConstraints(pattern=r"^[A-Z_][A-Z0-9_]{0,127}$")] | None = Field(
        None, description="An environment variable whose value is sent as 'Authorization: Bearer …' "
                          "(never written anywhere).")
    timeout: str = Field("5s", description="How long one request may take, e.g. '5s' (at most 60 s).")
    max_bytes: int = Field(1_000_000, ge=1, le=50_000_000, description="A larger response is refused.")
    cache_ttl: str = Field("0s", description="A response is reused by the same process for this long "
                                             "(its records keep the time they were fetched).")
    requests: list[ApiRequest] = Field(min_length=1, max_length=50)

    @field_validator("timeout", "cache_ttl")
    @classmethod
    def _dur(cls, v: str, info) -> str:
        from ..util.timeutil import parse_duration

        d = parse_duration(v, what=info.field_name)
        if info.field_name == "timeout" and not 0 < d.total_seconds() <= 60:
            raise ValueError("timeout: must be more than 0 and at most 60 seconds")
        return v

    @model_validator(mode="after")
    def _unique(self) -> "ApiOptions":
        names = [r.name for r in self.requests]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise ValueError(f"requests: {dup!r} is named twice")
        return self


class Linking(Strict):
    """Entity linking at load (load/link.py): the names, aliases and keys of the tenant's
    entities of ``entity_types`` found in each object's ``fields`` become relations
    ``relation`` (default MENTIONS) from the object's subject entity to the entity named,
    attested by the object, with ``extraction_method`` ``linker:exact`` or ``linker:fuzzy``
    and the match's confidence. A match below ``accept``, or with a rival entity within
    ``margin``, is kept as an unresolved entity with its candidates (at least ``candidate``)
    and links nothing."""

    entity_types: list[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]] = Field(min_length=1)
    fields: list[Literal["title", "content", "keys"]] = Field(default_factory=lambda: ["title", "content"])
    relation: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")] = "MENTIONS"
    accept: float = Field(0.9, gt=0.0, le=1.0, description="Least confidence of a linked mention.")
    candidate: float = Field(0.75, gt=0.0, le=1.0, description="Least score of an unresolved entity's candidate.")
    margin: float = Field(0.05, ge=0.0, le=1.0, description="A rival within this of the best leaves it unresolved.")
    fuzzy: bool = Field(True, description="false: exact phrases only.")

    @model_validator(mode="after")
    def _order(self) -> "Linking":
        if self.candidate > self.accept:
            raise ValueError("linking.candidate: must not exceed linking.accept")
        return self


ACCEPT_FIELD_PATTERN = r"^(title|content|locator|source_version|object_type|section|supports|facts\.[^\s\[\]]{1,128})$"


class InjectionPolicy(Strict):
    """What the untrusted-instruction gate leaves unscanned in an ``authoritative`` source:
    the named fields (``facts.<name>`` covers the fact's list items too; ``supports`` every
    entry), accepted by the source's owner for ``reason``. A finding in any other field of
    the source is rejected like in any other source."""

    accept_fields: list[Annotated[str, StringConstraints(pattern=ACCEPT_FIELD_PATTERN)]] = Field(
        min_length=1, description="Fields (title, content, locator, source_version, object_type, section, "
                                  "supports, facts.<name>) whose text the injection gate does not scan.")
    reason: Annotated[str, StringConstraints(min_length=1, max_length=500)] = Field(
        description="Why the owner accepts instruction-like text in these fields.")


class SourceManifest(Strict):
    source_id: Ident
    tenant_id: Ident | None = Field(None, description="None means each record names its tenant.")
    source_type: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    owner_team: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    classification: Classification
    trust_level: TrustLevel
    required_scopes: list[Scope]
    allowed_purposes: list[Ident] = Field(min_length=1)
    refresh_sla: str
    freshness: Freshness | None = None
    valid_time: ValidTime = ValidTime()
    deletion_mode: DeletionMode
    parser: Annotated[str, StringConstraints(pattern=PARSER_NAME_PATTERN)] = Field(
        description="records, markdown, git, table, json-export, or the name a parser plugin registers.")
    parser_version: str
    schema_version: int = Field(ge=1, le=1)
    enabled: bool
    snapshot: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    redaction: Redaction | None = None
    mapping: Mapping | None = None
    markdown: MarkdownOptions | None = None
    git: GitOptions | None = None
    table: TableOptions | None = None
    json_export: JsonExportOptions | None = None
    api: ApiOptions | None = Field(None, description="parser api: the live API (ctx.toml [live] allows its host).")
    linking: Linking | None = Field(None, description="Entity linking of this source's objects (opt-in).")
    injection: InjectionPolicy | None = Field(None, description="Fields of an authoritative source whose "
                                              "instruction-like text is accepted (not scanned).")
    on_dangling: Literal["error", "skip"] | None = Field(
        None, description="A relation naming an unknown entity or evidence object: an error (the default), "
                          "or skip: reported by the load and left out.")

    @model_validator(mode="after")
    def _parser_blocks(self) -> "SourceManifest":
        own = {"markdown": {"markdown"}, "git": {"git", "markdown"}, "table": {"table"},
               "json-export": {"json_export"}, "api": {"api"}}
        for block in ("markdown", "git", "table", "json_export", "api"):
            if getattr(self, block) is not None and block not in own.get(self.parser, set()):
                raise ValueError(f"{block}: not an option of parser {self.parser}")
        if self.mapping is not None and self.parser == "records":
            raise ValueError("mapping: parser records reads ctx's own fields (no mapping)")
        if self.mapping is not None and self.parser not in PARSER_VERSIONS:
            raise ValueError(f"mapping: parser {self.parser} is a plugin: its records carry ctx's own fields "
                             f"(no mapping)")
        if self.parser == "table" and self.table is None:
            raise ValueError("table: parser table needs a table block (file, format …)")
        if self.parser == "api" and self.api is None:
            raise ValueError("api: parser api needs an api block (base_url, requests …)")
        if self.parser in ("table", "json-export", "api") and self.mapping is None:
            raise ValueError(f"mapping: parser {self.parser} needs a mapping (object_id, title, body …)")
        if self.table is not None and self.table.row_groups is not None and self.mapping.relations:
            raise ValueError("table.row_groups: a group of rows attests no relation (map relations per row, "
                             "without row_groups)")
        if self.injection is not None and self.trust_level is not TrustLevel.authoritative:
            raise ValueError(f"injection.accept_fields: only an authoritative source may accept instruction-like "
                             f"text (this one is {self.trust_level.value})")
        if self.injection is not None and len(set(self.injection.accept_fields)) != len(self.injection.accept_fields):
            raise ValueError("injection.accept_fields: a field is named twice")
        if self.parser == "json-export" and self.json_export is None:
            raise ValueError("json_export: parser json-export needs a json_export block (file, records …)")
        return self

    @field_validator("refresh_sla")
    @classmethod
    def _sla(cls, v: str) -> str:
        from ..util.timeutil import parse_duration

        parse_duration(v, what="refresh_sla")
        return v

    @field_validator("freshness")
    @classmethod
    def _fresh(cls, v: Freshness | None) -> Freshness | None:
        from ..util.timeutil import parse_duration

        if v is not None:
            parse_duration(v.max_age, what="freshness.max_age")
        return v

    @field_validator("parser_version")
    @classmethod
    def _pv(cls, v: str, info) -> str:
        p = info.data.get("parser")     # a plugin's versions are checked when it is found (load/parsers/)
        if p in PARSER_VERSIONS and v not in PARSER_VERSIONS[p]:
            raise ValueError(f"parser {p} has no version {v!r} (known: {sorted(PARSER_VERSIONS[p])})")
        return v

    @field_validator("redaction")
    @classmethod
    def _redaction(cls, v: Redaction | None) -> Redaction | None:
        from ..util.masking import PatternError, check_replacement, compile_pattern

        if v is not None:
            for i, p in enumerate(v.patterns):
                try:
                    compile_pattern(p.regex)
                except PatternError as e:
                    raise ValueError(f"redaction.patterns[{i}].regex ({p.name}): {e}") from None
                try:
                    check_replacement(p.replacement)
                except PatternError as e:
                    raise ValueError(f"redaction.patterns[{i}].replacement ({p.name}): {e}") from None
        return v
