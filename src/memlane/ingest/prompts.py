"""Default prompts of the LLM engine (``custom_fact_extraction_prompt`` and
``custom_update_memory_prompt`` replace the first two).

Placeholders are filled with ``fill`` (plain replacement, so JSON braces need no escaping).
A custom update prompt without ``{memories}`` / ``{facts}`` gets both appended, as in mem0.
"""


def fill(template: str, **values: str) -> str:
    missing = [key for key in values if "{" + key + "}" not in template]
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    for key in missing:
        template += f"\n\n{key.capitalize()}:\n{values[key]}"
    return template


#: what precedes a project's custom instructions in the extraction prompt (core/project.py)
PROJECT_INSTRUCTIONS = """

The project's own instructions about what to remember and how (they take precedence over the rules above):
"""

FACT_EXTRACTION = """You extract durable facts for a long-term memory from a conversation.

Return facts stated by the {speaker} about themselves or the people and things in their life:
preferences, personal details, relationships, plans, events, health, work, habits.
- One fact per item, short and self-contained, written in the third person
  ("User likes X", "User's wife Sarah is a nurse"; in Chinese "用户喜欢X").
- Keep each fact in the language and script the {speaker} used (Traditional Chinese stays Traditional).
- Keep names, numbers, dates and amounts exactly.
- Only what the {speaker} says is a source of facts. Other turns are context: never store
  their suggestions, opinions or examples.
- Skip greetings, thanks, small talk, questions and requests.
- If the {speaker} asks to forget or delete something, add one item "Forget: <what>".
- Classify each fact: "preference" (likes, dislikes), "profile" (stable trait: name, home, job,
  family, health), "event" (something that happened or will happen at a time), or "fact".

Answer with only a JSON object: {"facts": [{"fact": "...", "type": "preference"}, ...]}
Answer {"facts": []} when there is nothing worth remembering."""

UPDATE_MEMORY = """You keep a long-term memory consistent. Compare new facts with the existing memories.

For every existing memory and every new fact decide one event:
- ADD: the fact is new information. Give it a new id.
- UPDATE: the fact refines or changes an existing memory (more detail, a new value for the same
  thing: a new city, a changed preference). Keep the memory's id, give the new text in the same
  language, and put the previous text in "old_memory".
- DELETE: the fact contradicts or retracts the memory, or a "Forget: ..." fact asks to remove it.
- NONE: nothing changes (the fact repeats or paraphrases what is known).
A "Forget: ..." fact never creates a memory. Prefer NONE over UPDATE and UPDATE over ADD when the
meaning is the same. Use only the ids given for existing memories.

Existing memories:
{memories}

New facts:
{facts}

Answer with only a JSON object:
{"memory": [{"id": "0", "text": "...", "event": "ADD|UPDATE|DELETE|NONE", "old_memory": "..."}, ...]}"""

PROCEDURE_SUMMARY = """Summarise the agent's execution history below as one procedural memory the agent can
reuse: the task, the steps taken in order (tools called and what they returned, decisions made),
what worked, what failed, and the final outcome. Be factual and concise; keep names, values and
errors exactly. Answer with the summary text only."""

MERGE_MEMORIES = """Two memories of a long-term memory say nearly the same thing. Write the one memory that
replaces both: keep every detail either of them gives (names, numbers, dates and amounts exactly),
in their language and script, as one short statement in the third person.
If they contradict each other (one negates the other, or they give different values for the same
thing), answer exactly: CONTRADICTION

Older memory: {older}
Newer memory: {newer}

Answer with the merged memory only, or CONTRADICTION."""

REPAIR = """Your previous answer could not be used: {problem}
Answer again with only the JSON object described in the instructions, and nothing else."""
