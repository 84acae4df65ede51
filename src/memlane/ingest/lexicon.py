"""Word lists of the offline engine: a small ontology of personal facts, in English and Chinese.

``CONCEPTS`` maps surface forms to concept tokens so that paraphrases compare
equal ("allergic" / "allergy" / "过敏" → ``ALLERGY``; "love" / "fan of" / "喜欢"
→ ``PREF``). Concepts marked exclusive in ``EXCLUSIVE`` hold one value at a time
(a person lives in one city, has one job, one name): a new value for them
replaces the old one. Chinese forms are written in Simplified characters; text
is converted before matching. Keep entries general: they describe how people
talk about themselves, not any particular conversation.
"""

from __future__ import annotations

# concept -> surface forms (English forms are matched on word stems, multiword forms as phrases)
CONCEPTS: dict[str, tuple[str, ...]] = {
    "PREF": ("like", "likes", "liked", "love", "loves", "loved", "enjoy", "enjoys", "prefer", "prefers", "preferred",
             "favourite", "favorite", "fan of", "big fan", "huge fan", "adore", "interested in", "keen on",
             "fond of", "crazy about", "obsessed with", "passionate about",
             "喜欢吃", "喜欢喝", "喜欢看", "喜欢玩", "喜欢听", "喜欢", "爱吃", "爱喝", "爱看", "爱玩", "爱听", "爱",
             "最爱", "偏好", "偏爱", "看好", "热爱", "钟爱", "感兴趣", "迷上"),
    "DISLIKE": ("hate", "hates", "dislike", "dislikes", "can't stand", "cannot stand", "detest",
                "讨厌", "不喜欢", "受不了", "反感"),
    "RESIDENCE": ("live in", "lives in", "living in", "live", "lives", "lived", "reside", "resides", "based in",
                  "moved to", "move to", "moving to", "moved from", "moving from", "relocated", "address", "home town", "hometown",
                  "住在", "住址", "地址", "住", "搬到", "搬家", "定居", "老家"),
    "JOB": ("work as", "works as", "working as", "work at", "works at", "work for", "works for", "job", "career",
            "profession", "occupation", "employed", "unemployed", "self-employed", "employer", "company",
            "startup", "freelance", "freelancer", "retired", "laid off", "quit my job", "new job",
            "上班", "工作", "职业", "公司", "任职", "就职", "离职", "辞职", "创业", "跳槽", "退休", "失业", "自由职业"),
    "NAME": ("name is", "my name", "user's name", "call me", "go by", "goes by", "is called", "are called", "was called",
             "is named", "was named", "名字", "叫我", "我叫", "用户叫", "使用者叫"),
    "AGE": ("years old", "year old", "age", "birthday", "born", "岁", "年龄", "生日", "出生"),
    "ANNIVERSARY": ("anniversary", "anniversaries", "纪念日"),
    "ALLERGY": ("allergic", "allergy", "allergies", "intolerant", "intolerance", "过敏"),
    "DIET_VEGETARIAN": ("vegetarian", "veggie", "meat-free", "plant-based", "吃素", "素食", "茹素"),
    "DIET_VEGAN": ("vegan", "纯素"),
    "CUISINE": ("food", "cuisine", "dishes", "dish", "料理", "菜系", "菜"),
    "PET": ("pet", "pets", "宠物", "养了", "养"),
    "SPOUSE": ("wife", "husband", "spouse", "partner", "老婆", "老公", "妻子", "丈夫", "爱人", "太太", "先生"),
    "RISK": ("risk tolerance", "risk appetite", "risk", "风险"),
    "LONG_TERM": ("long term", "long-term", "longterm", "长期", "长线"),
    "HOLD": ("hold", "holds", "holding", "持有", "拿着"),
    "STOCK": ("stocks", "stock", "shares", "equities", "股票", "股"),
    "LEARN": ("learn", "learning", "learns", "study", "studying", "lessons", "class", "course",
              "学习", "学", "课"),
}

#: Who a statement is about, when it is not the speaker: exclusive concepts only
#: conflict between statements about the same party ("my sister lives in Rome"
#: does not move the user).
PARTIES: dict[str, tuple[str, ...]] = {
    "spouse": ("wife", "husband", "spouse", "partner", "girlfriend", "boyfriend", "老婆", "老公", "妻子", "丈夫", "爱人", "太太"),
    "child": ("daughter", "son", "kid", "kids", "child", "children", "baby", "女儿", "儿子", "孩子", "宝宝"),
    "sibling": ("sister", "brother", "sibling", "姐姐", "妹妹", "哥哥", "弟弟"),
    "parent": ("mother", "mom", "mum", "father", "dad", "parents", "妈妈", "母亲", "爸爸", "父亲", "父母"),
    "friend": ("friend", "friends", "colleague", "coworker", "boss", "manager", "朋友", "同事", "老板", "领导"),
    "pet": ("dog", "cat", "puppy", "kitten", "pet", "狗", "猫", "宠物"),
}

#: Identity facts — who someone is — in the order a portrait of them gives them: name, age, home, work, family,
#: pets, diet and allergies. A statement naming one is a ``profile`` memory, and a question about the user
#: answers with these first (``retrieval/about_answer.py``).
PROFILE: tuple[str, ...] = ("NAME", "AGE", "RESIDENCE", "JOB", "SPOUSE", "PET", "DIET_VEGETARIAN", "DIET_VEGAN",
                            "ALLERGY")

#: Dates that come back every year (a birthday, a date of birth, an anniversary): a statement giving one is a
#: fact about someone, not an event, unless it says when it happened this once ("celebrated it yesterday").
RECURRING_DATES = frozenset({"AGE", "ANNIVERSARY"})

#: Concepts that hold one value at a time: a new value replaces the old.
EXCLUSIVE = frozenset({"RESIDENCE", "JOB", "NAME", "AGE", "RISK", "SPOUSE"})

#: Concepts too general to make two statements about the same thing on their own.
GENERIC = frozenset({"PREF", "DISLIKE", "CUISINE", "LEARN", "HOLD", "PET"})

#: Levels and polarities: two statements with different members of one scale disagree.
SCALES: tuple[frozenset[str], ...] = (
    frozenset({"high", "low", "medium", "moderate", "middle", "高", "低", "中等", "中"}),
    frozenset({"conservative", "aggressive", "cautious", "balanced", "保守", "激进", "稳健"}),
)

# Markers (English on lower-cased text; Chinese on Simplified text)
NEGATION_EN = ("not", "n't", "no longer", "never", "anymore", "any more", "stopped", "quit", "gave up", "don't")
NEGATION_ZH = ("不再", "不想", "不要", "不喜欢", "不爱", "不吃", "不喝", "不是", "没有", "别再", "戒了", "放弃",
               "不怎么", "不太", "不住", "不在", "离职", "辞职", "退休", "卖掉", "卖了", "搬走", "分手", "离婚")
CHANGE_EN = ("moved", "switched", "changed", "now", "new", "instead", "no longer", "anymore", "actually",
             "correction", "sold", "quit", "left", "became", "become", "from")
CHANGE_ZH = ("换", "改", "搬", "现在", "转向", "转而", "卖掉", "卖了", "不再", "已经", "其实", "更正", "离开", "辞职")
#: openers that say the sentence refines something already said ("Specifically, …", 具体来说…)
REFINE_EN = ("to be more specific", "to be specific", "more specifically", "specifically", "to be precise",
             "to be more precise", "more precisely", "precisely", "to be exact", "more exactly", "in particular",
             "to clarify", "i mean", "that is", "more accurately", "to be accurate")
REFINE_ZH = ("具体来说", "具体地说", "具体而言", "具体一点", "更具体地说", "确切地说", "确切来说", "准确地说", "准确来说",
             "准确点说", "详细来说", "更准确地说", "严格来说", "也就是说")

FORGET_EN = ("forget", "delete", "erase", "remove", "don't remember", "do not remember", "stop remembering",
             "don't store", "do not store", "don't keep", "do not keep", "wipe")
FORGET_ZH = ("删掉", "删除", "忘掉", "忘记", "忘了吧", "不要记", "别记", "不希望你记", "不要保存", "别保存", "清除", "抹掉")

# English words that carry no information about the user
STOPWORDS_EN = frozenset("""
a an the and or but so if then than that this these those there here it its it's is are was were be been being
am do does did doing have has had having i i'm i've i'd i'll me my mine myself we our ours us you your yours he
she him her his they them their what which who whom when where why how all any both each few more most other
some such only own same too very can will just should would could might must shall may of to in on at by for
with about against between into through during before after above below from up down out off over under again
further once also as because until while user user's agent agent's s t d ll m ve re
really actually honestly basically literally totally truly quite pretty just always ever still even
big huge little lot lots much many well way thing things stuff kind sort bit
been have being get got gets getting now every almost anymore these those days
not no don't doesn't didn't isn't aren't wasn't weren't won't can't cannot never longer
""".split())

# Chinese words that contain a concept's character without meaning it (记住 "remember" is not 住 "live")
NOT_CONCEPT_ZH = ("记住", "忍不住", "忍住", "抓住", "挡住", "留住", "禁不住", "靠不住", "住院", "喜欢上")

# Words of a request to forget that do not name what to forget
FORGET_NOISE = ("information", "info", "details", "anything about", "everything about", "stuff about", "that",
                "相关", "有关", "关于", "信息", "资料", "内容", "希望", "想让你", "记住", "记得", "保留", "所有", "一切")

# Chinese characters and words that carry no information on their own
FUNCTION_ZH = ("用户", "使用者", "我们", "我的", "我", "你", "他", "她", "它", "的", "了", "是", "在", "都", "很",
               "也", "就", "吧", "呢", "啊", "呀", "吗", "嘛", "着", "过", "一直", "一个", "一只", "一家", "一杯",
               "一", "个", "只", "把", "被", "和", "与", "跟", "对", "会", "要", "想", "得", "地", "这", "那",
               "还", "又", "再", "最近", "现在", "已经", "主要", "里", "说", "就行", "行", "不", "没", "别")

# Utterances that are pure conversation management
SMALL_TALK_ZH = ("好的", "好", "谢谢", "多谢", "谢啦", "不客气", "嗯", "哦", "哈哈", "你好", "再见", "晚安", "早安",
                 "收到", "明白", "知道了", "行", "可以", "没问题", "对了", "忘了跟你说", "顺便说一下", "放心", "其实",
                 "说实话", "老实说", "具体来说", "另外", "还有", "此外", "而且")

QUESTION_WORDS_EN = ("what", "what's", "whats", "how", "why", "when", "where", "which", "who", "whom", "whose",
                     "can", "could", "would", "will", "should", "shall", "do", "does", "did", "is", "are", "am",
                     "was", "were", "may", "might", "have", "has")
QUESTION_ZH = ("什么", "怎么", "怎样", "为什么", "哪", "几", "多少", "是否", "能不能", "可不可以", "有没有", "吗", "呢", "么")
REQUEST_EN = ("please", "can you", "could you", "would you", "will you", "tell me", "help me", "show me",
              "give me", "remind me", "let me know", "recommend", "suggest", "translate", "explain", "write me",
              "find me", "keep that in mind", "keep in mind", "let's", "lets")
REQUEST_ZH = ("请", "帮我", "帮忙", "给我", "推荐", "建议", "告诉我", "翻译", "解释", "麻烦", "能否", "可以帮")

# Discourse openers stripped from the start of an English statement
OPENERS_EN = REFINE_EN + ("big news", "heads up", "fun fact", "just a reminder that", "just a reminder", "reminder",
              "small correction", "correction",
              "by the way", "btw", "fyi", "also", "and", "but", "so", "oh", "well", "anyway", "honestly",
              "actually", "basically", "plus", "update", "quick update", "ps", "p.s.", "oh and", "one more thing")
