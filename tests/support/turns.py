"""A small two-speaker conversation for tests of the default search's stages (candidates, actor focus,
keyword matches): its turns share words, so the stages' candidates overlap. Written for these tests."""

from __future__ import annotations

#: (speaker, text), the speakers taking turns
TWO_SPEAKER_TURNS = [("Caroline" if i % 2 else "Melanie", text) for i, text in enumerate([
    "Melanie, where should we go camping this summer?", "I painted a sunrise over the lake last week",
    "Caroline went to a support group for the first time", "We pitched our tent by the lake with the kids",
    "The camping trip went wrong when it rained", "My painting class starts again in August",
    "Caroline is researching adoption agencies", "Melanie runs to destress after work",
    "Did you go camping with the kids again?", "I finished the sunrise painting for my mother",
])]
