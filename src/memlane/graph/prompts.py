"""The prompt of the LLM relation extractor (``llm_extract``)."""

RELATION_EXTRACTION = """You extract a knowledge graph from a conversation for a long-term memory.

Return the relations the user states about themselves and the people, places, organisations and
things in their life, as (source, relationship, destination) triples.
- Write the user as "USER" (for "I", "me", "my", "我"). Other entities by their name as written,
  in the user's language and script.
- relationship: lower snake_case English. Prefer these when they fit: likes, loves, hates,
  works_at, lives_in, married_to, born_in, has, name, friend_of, parent_of, child_of, studies_at.
- Only durable facts stated by the user; skip questions, greetings, the assistant's suggestions.
- When the user retracts a relation ("I no longer like coffee", "I don't live in Paris anymore",
  "我不再喜欢咖啡"), return it with "negated": true.

Answer with only a JSON object:
{"relations": [{"source": "USER", "relationship": "lives_in", "destination": "Paris", "negated": false}]}
Answer {"relations": []} when there is none."""
