"""Short notes in English and Chinese that the keyword-search tests store and search."""

NOTES = [
    "The staging server password rotates every Friday",
    "Order XJ-9000 shipped to the Berlin warehouse",
    "I enjoy long walks on the beach at sunset",
    "My sister lives in Toronto and works as a nurse",
    "我喜欢吃四川火锅",
    "我住在杭州，每天喝龍井茶",
]
