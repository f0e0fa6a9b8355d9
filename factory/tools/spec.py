"""The tool contract shared by every stage: `ToolSpec` and its parts.

A ToolSpec is what the factory knows about one executable tool, whatever its
source (an OpenAPI/Swagger operation or an MCP tool).  Loaders produce it, the
executor consumes it, the connectivity graph reasons over it, and its
canonical JSON feeds the tool-surface fingerprint.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SourceKind = Literal["openapi", "mcp", "retrieval"]
ParamLocation = Literal["query", "path", "header", "body", "mcp"]


def tool_id(domain: str, platform: str, name: str) -> str:
    """The id of a tool across every inventory: ``<domain>/<platform>/<name>``."""
    return f"{domain}/{platform}/{name}"


class SourceRef(BaseModel):
    """Where a tool came from, so its surface can be re-read and re-executed."""

    model_config = ConfigDict(frozen=True)

    kind: SourceKind
    locator: str = Field(
        description="Spec URL/path (openapi), the server command line (mcp) or retrieval://<collection> (retrieval)."
    )
    base_url: str | None = Field(
        default=None, description="Base URL calls are sent to (openapi); the LanceDB location (retrieval)."
    )
    recorded: bool = Field(
        default=False,
        exclude_if=lambda v: not v,  # absent unless set: inventories of live sources are unchanged
        description="Read-only calls are answered from recordings (the source's `responses: record`; "
        "factory.tools.transports.recorded).",
    )


class OutputField(BaseModel):
    """One field of a record returned by a tool (dotted path for nested fields)."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str = Field(
        default="string", description="JSON Schema type: string, integer, number, boolean, object, array."
    )
    description: str = ""
    enum: list[Any] | None = None
    format: str | None = None


class GenericParams(BaseModel):
    """Parameters that carry no task meaning: keys, paging and format switches.

    They are filled by the DEFAULT branch of a source plan, never bound to an
    upstream output, and do not make a success 'semantic'.
    """

    model_config = ConfigDict(frozen=True)

    key: str | None = Field(default=None, description="Name of the API-key parameter, if the tool needs one.")
    key_in: Literal["query", "header", "body"] = "query"
    key_scheme: Literal["bearer", "basic"] | None = Field(
        default=None,
        description="How the key is sent: None, as it is (an apiKey scheme); bearer: the header value is"
        " `Bearer <key>` (http bearer, oauth2, openIdConnect schemes); basic: `Basic base64(<key>)`, the key"
        " being `user:password` (http basic).",
    )
    page: str | None = Field(default=None, description="Page-number parameter.")
    page_size: str | None = Field(default=None, description="Rows-per-page parameter.")
    format: list[str] = Field(default_factory=list, description="Response-format parameters (e.g. _type=json).")

    def names(self) -> set[str]:
        out = {n for n in (self.key, self.page, self.page_size) if n}
        out.update(self.format)
        return out


class KeyAcquisition(BaseModel):
    """Marks a tool that hands out an API key for its platform."""

    model_config = ConfigDict(frozen=True)

    output_field: str = Field(description="Dotted path of the key in the tool's response body.")


class ResultEnvelope(BaseModel):
    """Where a tool reports its own status inside a 200 body (data.go.kr style)."""

    model_config = ConfigDict(frozen=True)

    code_path: str = Field(description="Dotted path of the result code, e.g. response.header.resultCode.")
    message_path: str | None = None
    ok_codes: list[str] = Field(default_factory=lambda: ["00"])
    no_data_codes: list[str] = Field(default_factory=lambda: ["03"])


class ToolSpec(BaseModel):
    """One executable tool of a domain."""

    model_config = ConfigDict(frozen=True)

    domain: str
    platform: str
    name: str = Field(
        description="Unique within the domain (operationId or MCP tool name), a valid function name "
        "(^[a-zA-Z0-9_-]{1,64}$, assigned at ingestion)."
    )
    original_name: str | None = Field(
        default=None, description="The source's own name when `name` had to be changed to be a valid function name."
    )
    description: str
    method: str = Field(default="GET", description="HTTP method, or 'MCP' for MCP tools.")
    path: str = Field(default="", description="URL path template relative to base_url (openapi).")
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []},
        description="JSON Schema (type object) of the arguments, $refs resolved.",
    )
    param_locations: dict[str, ParamLocation] = Field(default_factory=dict)
    param_wire_names: dict[str, str] = Field(
        default_factory=dict,
        description="Argument → name sent on the wire, for arguments renamed apart at ingestion (a body property"
        " named like a path parameter becomes `body_<name>`); absent: the argument's own name.",
    )
    output_schema: dict[str, Any] = Field(default_factory=dict, description="JSON Schema of the success body.")
    output_fields: dict[str, OutputField] = Field(
        default_factory=dict, description="Fields of one record (dotted paths), keyed by name."
    )
    records_path: str | None = Field(
        default=None,
        description="Dotted path of the record list in the body; None means the body itself is one record"
        " (or the list of records when the body is a list).",
    )
    total_count_path: str | None = None
    envelope: ResultEnvelope | None = None
    generic_params: GenericParams = Field(default_factory=GenericParams)
    key_acquisition: KeyAcquisition | None = None
    state_changing: bool = False
    destructive: bool = Field(
        default=False,
        description="Calling it may destroy or overwrite state, or its effect is unknown (factory.tools.safety);"
        " not executed unless the project opts in (probes.allow_destructive, a source's allow_destructive_tools).",
    )
    realtime: bool = False
    source: SourceRef
    path_kinds: dict[str, str] = Field(
        default_factory=dict,
        exclude=True,
        description="Path input → the kind of path it takes (file | directory), as the probes showed (an EISDIR "
        "for a folder, successes with files): set by `ToolRegistry.from_inventories`, never stored in the inventory.",
    )

    @property
    def qualified_name(self) -> str:
        return f"{self.platform}.{self.name}"

    @property
    def tool_id(self) -> str:
        """``<domain>/<platform>/<name>`` (`tool_id`), unique across the inventories."""
        return tool_id(self.domain, self.platform, self.name)

    @property
    def required_params(self) -> list[str]:
        return list(self.input_schema.get("required", []))

    @property
    def params(self) -> dict[str, dict[str, Any]]:
        return dict(self.input_schema.get("properties", {}))

    def semantic_params(self) -> list[str]:
        """Input parameters that are not generic (keys, paging, format)."""
        generic = self.generic_params.names()
        return [p for p in self.params if p not in generic]

    def surface(self) -> dict[str, Any]:
        """The part of the spec that defines the tool surface (fingerprinted)."""
        return {
            "name": self.name,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema or {k: v.model_dump() for k, v in sorted(self.output_fields.items())},
        }
