"""What the graph's functions return, as types (no imports beyond typing: the receipt's types use them too).

The JSON of ``memdeck graph ...`` and the MCP graph tools is these shapes.
"""

# No postponed annotations: NotRequired is read at run time from evaluated annotations (Python 3.11).
from typing import NotRequired, TypedDict


class GraphCounts(TypedDict, total=False):
    """What a forget (or a re-scan) changed in the graph: rows deleted, and rows whose mentions or sources
    lost the forgotten ids (a whole principal's forget deletes only)."""

    entities_deleted: int
    relations_deleted: int
    entities_updated: int
    relations_updated: int


class EntityBrief(TypedDict):
    """An entity in a list: its id, name, kind and how many memories mention it."""

    id: str
    name: str
    kind: str
    mentions: int


class EntityListing(EntityBrief):
    """An entity as the entity list shows it."""

    principal: str
    aliases: list[str]
    relations: int


class EntityJSON(TypedDict):
    """An entity in full: the memories that mention it by id."""

    id: str
    principal: str
    name: str
    key: str
    kind: str
    aliases: list[str]
    mentions: list[str]
    created_at: str | None
    updated_at: str | None


class RelationJSON(TypedDict):
    """A relation; as a step of a path or a related entity's link also its ``kind`` (``relation``, or
    ``co-mention`` for a memory naming both entities, which has no id), with both entities' names."""

    id: str | None
    subject_id: str
    predicate: str
    object_id: str
    negated: bool
    valid_from: str | None
    valid_until: str | None
    sources: list[str]
    subject: NotRequired[str | None]
    object: NotRequired[str | None]
    kind: NotRequired[str]


class EntityDescription(EntityJSON):
    """One entity with its relations in both directions."""

    relations: list[RelationJSON]


class RelatedEntity(EntityBrief):
    depth: int
    via: RelationJSON | None


class Related(TypedDict):
    """The entities within some relations of one, nearest first."""

    entity: EntityBrief
    principal: str
    depth: int
    related: list[RelatedEntity]


class PathStep(TypedDict):
    entity: EntityBrief
    via: RelationJSON | None


# "from" is a keyword: the functional form keeps the JSON key.
GraphPath = TypedDict(
    "GraphPath",
    {"from": EntityBrief, "to": EntityBrief, "principal": str, "found": bool, "path": list[PathStep]},
)


class ConnectedEntity(TypedDict):
    id: str
    principal: str
    name: str
    kind: str
    relations: int
    mentions: int


class OrphanEntity(TypedDict):
    id: str
    principal: str
    name: str
    kind: str


class GraphSummary(TypedDict):
    """The graph in scope for the analytics screen: totals, most connected entities, entities per tier and
    entities no relation nor active memory holds."""

    entities: int
    relations: int
    most_connected: list[ConnectedEntity]
    per_tier: dict[str, int]
    orphans: list[OrphanEntity]
