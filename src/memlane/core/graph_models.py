"""The nouns of graph memory (core: the store reads and writes them): triples, entities, relations.

A relation is (source entity, relationship, destination entity) in one scope
(``user_id`` / ``agent_id`` / ``run_id``), with validity like a memory: a
contradicted relation gets ``valid_to`` (and ``superseded_by`` when a newer
relation replaced it) and is kept, never erased. Provenance is the ids of the
messages it came from.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

#: Who "I" / "me" / "我" is in a triple: the facade maps it to the scope's user entity.
USER = "__user__"


class Triple(BaseModel):
    """One statement an extractor found: names as written, a canonical relationship."""

    model_config = ConfigDict(frozen=True)

    source: str = Field(min_length=1, max_length=200)
    relationship: str = Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")
    destination: str = Field(min_length=1, max_length=200)
    #: "I no longer like X": retracts (source, relationship, destination), adds nothing
    negated: bool = False


class Entity(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    name: str
    #: the resolution key (``resolve.normalize``); unique per scope
    key: str
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    run_id: Optional[str] = None
    created_at: str
    updated_at: str
    #: unit vector of the name (numpy array); not part of any output
    vector: Any = Field(default=None, exclude=True, repr=False)


class Relation(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    source_id: str
    source: str
    relationship: str
    destination_id: str
    destination: str
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    run_id: Optional[str] = None
    created_at: str
    updated_at: str
    valid_from: str
    valid_to: Optional[str] = None
    invalid_reason: Optional[str] = None
    superseded_by: Optional[str] = None
    source_message_ids: list[str] = Field(default_factory=list)
    #: unit vector of "source relationship destination" (numpy array); not part of any output
    vector: Any = Field(default=None, exclude=True, repr=False)

    @property
    def text(self) -> str:
        return f"{self.source} {self.relationship.replace('_', ' ')} {self.destination}"

    def to_item(self) -> dict[str, Any]:
        """The public shape (``get_all``): the triple, its scope, validity and provenance."""
        return self.model_dump(exclude={"source_id", "destination_id"}, exclude_none=True)

    def to_hit(self, score: float) -> dict[str, Any]:
        """The shape of a search hit (seed 000's ``relations``: source, relationship, destination, weight;
        ``score`` is the same number under memlane's name for every other result)."""
        score = round(float(score), 6)
        return {"id": self.id, "source": self.source, "relationship": self.relationship,
                "destination": self.destination, "weight": score, "score": score}


class RelationInvalidation(BaseModel):
    id: str
    reason: str
    superseded_by: Optional[str] = None
    at: str


class RelationConfirmation(BaseModel):
    """A new statement of a valid relation: its messages join the relation's provenance."""

    id: str
    source_message_ids: list[str]
    at: str


class GraphChanges(BaseModel):
    """What one ``add`` writes to the graph (in the same transaction as its memories)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    invalidations: list[RelationInvalidation] = Field(default_factory=list)
    confirmations: list[RelationConfirmation] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.entities or self.relations or self.invalidations or self.confirmations)
