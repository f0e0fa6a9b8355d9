"""Input and output models of every model role.

One pydantic model per structured reply: the JSON schema a backend is asked to
follow is `model_json_schema()` of the same class that parses the reply.
Inputs are deliberately generic (briefs of tools, summaries of steps in natural
terms) so that later stages can fill them from their own records.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Scalar = str | int | float | bool
Language = Literal["en", "ko"]


class _In(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Out(BaseModel):
    # Replies are parsed leniently about extra keys a model may add, strictly about types.
    model_config = ConfigDict(extra="ignore")


# --------------------------------------------------------------------------- tools


class FieldBrief(_In):
    """One output field of a tool's records."""

    name: str = Field(description="Field name (dotted path for nested fields).")
    type: str = Field(default="string", description="JSON Schema type.")
    description: str = ""
    samples: list[Scalar] = Field(default_factory=list, description="A few values seen in real executions.")


class ParamBrief(_In):
    """One input parameter of a tool."""

    name: str
    type: str = "string"
    description: str = ""
    required: bool = False
    enum: list[Scalar] | None = None
    default: Scalar | None = None
    examples: list[Scalar] = Field(default_factory=list, description="Values the tool is known to accept.")
    items_type: str | None = Field(
        default=None, description="For an array parameter: the JSON type of its items (a list of names: 'string')."
    )


class ToolBrief(_In):
    """What a role needs to know about a tool."""

    name: str
    description: str = ""
    platform: str = ""
    params: list[ParamBrief] = Field(default_factory=list)
    fields: list[FieldBrief] = Field(default_factory=list)
    generic_params: list[str] = Field(
        default_factory=list, description="Keys, paging and format parameters: never bound, filled by defaults."
    )

    def param(self, name: str) -> ParamBrief | None:
        return next((p for p in self.params if p.name == name), None)

    def field(self, name: str) -> FieldBrief | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def semantic_params(self) -> list[ParamBrief]:
        return [p for p in self.params if p.name not in self.generic_params]

    @classmethod
    def from_spec(
        cls,
        spec: Any,
        field_samples: dict[str, list[Scalar]] | None = None,
        param_examples: dict[str, list[Scalar]] | None = None,
    ) -> "ToolBrief":
        """Build a brief from a `factory.tools.spec.ToolSpec` plus sampled values (validated once, as
        one nested value: the skeleton builds one per tool, 10^4 of them at scale)."""
        field_samples = field_samples or {}
        param_examples = param_examples or {}
        required = set(spec.required_params)
        params = []
        for name, schema in spec.params.items():
            examples = list(param_examples.get(name, []))
            examples += [e for e in schema.get("examples", []) if isinstance(e, Scalar) and e not in examples]
            if "example" in schema and isinstance(schema["example"], Scalar) and schema["example"] not in examples:
                examples.append(schema["example"])
            default = schema.get("default")
            items = schema.get("items")
            items_type = items.get("type") if schema.get("type") == "array" and isinstance(items, dict) else None
            params.append(
                {
                    "name": name,
                    "type": str(schema.get("type", "string")),
                    "description": str(schema.get("description", "")),
                    "required": name in required,
                    "enum": schema.get("enum"),
                    "default": default if isinstance(default, Scalar) else None,
                    "examples": examples[:5],
                    "items_type": items_type if isinstance(items_type, str) else None,
                }
            )
        fields = [
            {"name": n, "type": f.type, "description": f.description, "samples": list(field_samples.get(n, []))[:5]}
            for n, f in spec.output_fields.items()
        ]
        return cls.model_validate(
            {
                "name": spec.name,
                "description": spec.description,
                "platform": spec.platform,
                "params": params,
                "fields": fields,
                "generic_params": sorted(spec.generic_params.names()),
            }
        )


# --------------------------------------------------------------------------- edge proposal


class EdgeProposalInput(_In):
    source: ToolBrief = Field(description="The upstream tool whose output may feed the target.")
    target: ToolBrief = Field(description="The downstream tool whose inputs may be filled from the source.")

    @classmethod
    def pair(cls, source: ToolBrief, target: ToolBrief) -> "EdgeProposalInput":
        """`model_construct(source=source, target=target)` of two validated briefs, without its per-call
        field walk (the skeleton pairs 10^5 candidates at scale): the same instance state, set directly."""
        m = cls.__new__(cls)
        _setattr(m, "__dict__", {"source": source, "target": target})
        _setattr(m, "__pydantic_fields_set__", {"source", "target"})
        _setattr(m, "__pydantic_extra__", None)
        _setattr(m, "__pydantic_private__", None)
        return m


_setattr = object.__setattr__  # what pydantic's model_construct sets a (frozen) model's state with


class Binding(_Out):
    target_param: str = Field(description="Input parameter of the target tool.")
    source_field: str = Field(description="Output field of the source tool that fills it.")
    transform: str | None = Field(default=None, description="Optional transform, e.g. 'date:YYYYMMDD' or 'upper'.")


class EdgeProposal(_Out):
    feasibility_score: float = Field(ge=0.0, le=1.0, description="How likely the source's output can feed the target.")
    reason: str = Field(description="One sentence.")
    bindings: list[Binding] = Field(default_factory=list)
    default_candidates: dict[str, list[Scalar]] = Field(
        default_factory=dict, description="Unbound target parameters → a few candidate values."
    )


# --------------------------------------------------------------------------- source arguments


class SourceArgumentsInput(_In):
    tool: ToolBrief
    known_values: dict[str, list[Scalar]] = Field(
        default_factory=dict, description="Parameter → values known to exist in the world (from probes, the KG)."
    )
    instruction: str = Field(default="", description="Optional intent, e.g. 'a date with many flights'.")
    variant: int = Field(default=0, ge=0, description="Pick the n-th candidate combination (deterministic).")


class SourceArguments(_Out):
    args: dict[str, Scalar] = Field(description="Argument name → value; generic parameters are left out.")


# --------------------------------------------------------------------------- queries


class TrajectoryStep(_In):
    step: int = Field(ge=1, description="1-based; parallel calls share a step.")
    tool: str
    summary: str = Field(description="What the step does, in natural terms of the query language.")
    args: dict[str, Any] = Field(default_factory=dict)
    result_count: int | None = None
    passed_values: list[Scalar] = Field(
        default_factory=list, description="Values from this step's output that later steps consumed (junction values)."
    )
    feeds_answer: bool = Field(default=False, description="The answer reads this step's output directly.")


class AnswerMaterial(_In):
    type: Literal["number", "string", "list", "boolean", "date"] = "string"
    value: Any = Field(description="The gold value (a list for type 'list').")
    fields: list[str] = Field(default_factory=list, description="Output fields the value comes from.")
    description: str = Field(
        description="Noun phrase naming the answer, in the query language (e.g. 'the number of flights')."
    )
    otherwise: str = Field(default="", description="COND: the noun phrase answered when the condition fails.")
    options: list[str] = Field(
        default_factory=list, description="CMP: the two alternatives compared, as phrases ('carrier code B6')."
    )
    parts: dict[str, Any] = Field(
        default_factory=dict,
        description="The realization's pieces the templates compose (factory.synthesis.phrasing): the ask, the "
        "counted noun and its owner, the value's field and subject, COND/CMP/SEM parts.",
    )
    sem_parts: list[str] = Field(
        default_factory=list,
        description="SEM: the noun phrase of each part asked for (two-stage composition: one sub-question each).",
    )
    counter: str = Field(default="", description="Korean counter word of a count answer (곡, 명, 개, 건, …).")


class QueryWriterInput(_In):
    pattern: str = Field(description="SEQ, FAN, DRV, SEM, CMP, COND, MIXED or a combination like 'SEQ+FAN'.")
    language: Language = "en"
    steps: list[TrajectoryStep] = Field(min_length=1)
    seed_values: dict[str, Scalar] = Field(
        default_factory=dict, description="Label (natural terms) → value the query may cite, e.g. {'airline': 'Delta'}."
    )
    qualifier: str = Field(
        default="", description="Selection or condition in natural terms, e.g. 'with the longest departure delay'."
    )
    answer: AnswerMaterial
    variant: int = Field(default=0, ge=0, description="Template variant (deterministic choice among phrasings).")
    stage: Literal["single", "sub", "compose"] = Field(
        default="single",
        description="Two-stage composition (SEM/CMP/COND with a model writer): 'sub' asks one step's sub-question, "
        "'compose' joins `sub_questions` into one question; 'single' writes the question at once.",
    )
    sub_questions: list[str] = Field(default_factory=list, description="compose: the sub-question of each step.")


class QueryDraft(_Out):
    query: str = Field(description="The user's question.")
    answer: str = Field(description="The gold answer as text.")


class QueryParaphraseInput(_In):
    query: str
    answer: str
    language: Language = "en"
    must_keep: list[Scalar] = Field(default_factory=list, description="Values the paraphrase must keep verbatim.")
    forbidden: list[Scalar] = Field(
        default_factory=list, description="Values that must not appear (the answer, intermediate junction values)."
    )
    variant: int = Field(default=0, ge=0)


# --------------------------------------------------------------------------- fluency


class FluencyInput(_In):
    """Candidate sentences of one language to score (e.g. the realizations of one question)."""

    texts: list[str] = Field(min_length=1)
    language: Language = "en"


class FluencyScores(_Out):
    scores: list[float | None] = Field(
        description="Mean token log-likelihood of each text (higher: more fluent); None where nothing scored it."
    )


# --------------------------------------------------------------------------- judges


class AnswerLeakageInput(_In):
    query: str
    answer: str
    language: Language = "en"
    answer_values: list[Scalar] = Field(default_factory=list, description="Values that make up the gold answer.")
    intermediate_values: list[Scalar] = Field(
        default_factory=list, description="Values a step derives and passes on; the agent must discover them."
    )
    seed_values: list[Scalar] = Field(default_factory=list, description="Values the query is allowed to state.")


class NonGradableInput(_In):
    query: str
    answer: str
    language: Language = "en"
    answer_type: str = "string"
    answer_items: int | None = Field(default=None, description="Length of a list answer.")
    realtime: bool = Field(default=False, description="The answer depends on a tool whose output changes with time.")
    fixed_time: str | None = Field(default=None, description="The timestamp the query pins, if any.")
    max_list_items: int = Field(default=20, ge=1)


class DecorativeChainInput(_In):
    query: str
    language: Language = "en"
    steps: list[TrajectoryStep] = Field(min_length=1)
    answer: AnswerMaterial


class JudgeVerdict(_Out):
    verdict: bool = Field(description="True when the defect this judge looks for is present.")
    reason: str = Field(description="One sentence; rules start it with a reason code.")


# --------------------------------------------------------------------------- agent


class GoldenAction(_In):
    step: int = Field(ge=1)
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class AgentTaskInput(_In):
    messages: list[dict[str, Any]] = Field(
        min_length=1, description="OpenAI chat messages (system optional, user query)."
    )
    tools: list[dict[str, Any]] = Field(
        description="OpenAI tool definitions ({'type': 'function', 'function': {...}})."
    )
    language: Language = "en"
    max_calls: int = Field(default=10, ge=1)
    golden_actions: list[GoldenAction] = Field(default_factory=list, description="Used by the rules (replay) resolver.")
    golden_answer: str | None = None


class ToolCallRecord(_Out):
    step: int
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    result: Any = None
    error: str | None = None


class AgentResult(_Out):
    final_answer: str
    trace: list[ToolCallRecord] = Field(default_factory=list)
    stop_reason: Literal["answer", "max_calls", "error", "replayed"] = "answer"


# --------------------------------------------------------------------------- user simulator (issue 19)


class SimulatorInput(_In):
    """One turn of the simulated user of a conversation task (kotraj fields)."""

    language: Language = "en"
    persona: dict[str, str] = Field(description="Register, urgency, region, digital literacy: drives the wording.")
    task: str = Field(description="What the user wants, in full (the verified question).")
    hidden_info: dict[str, Scalar] = Field(
        default_factory=dict, description="Fact name → value: revealed only when the agent asks for that fact."
    )
    revealed: list[str] = Field(default_factory=list, description="Facts already revealed in earlier turns.")
    answer_values: list[Scalar] = Field(
        default_factory=list, description="Values the agent's answer must state for the goal to count as met."
    )
    transcript: list[dict[str, str]] = Field(
        min_length=1, description="The conversation so far as {role: user|assistant, content} (tool turns left out)."
    )


class SimulatorReply(_Out):
    message: str = Field(description="The user's next message (empty only when stop is true).")
    stop: bool = Field(default=False, description="True when the user is done (the goal is met or cannot be).")
    revealed: list[str] = Field(default_factory=list, description="Fact names whose values this message states.")
