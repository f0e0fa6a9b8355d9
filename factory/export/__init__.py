"""dataset_exports core: the split tasks as training and benchmark files (no Dagster here).

- `tools`: OpenAI function definitions from the ToolSpecs of a task's available tools;
- `results`: tool results by re-executing golden actions (digest-verified) or from recorded samples,
  rendered with caps and truncation markers;
- `formats`: rows of the four formats (OpenAI chat JSONL, HF Parquet, RL/GRPO, benchmark JSON) and
  their validators;
- `card`: the dataset card (README.md with the Hub YAML header);
- `publish`: staging, read-back and all-or-nothing publication under <data_dir>/exports/;
- `build`: `build_exports(...)` tying it together, `read_back(...)` for the asset check.
"""
