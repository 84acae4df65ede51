"""Words for the people in someone's life (relatives, partners, friends, colleagues) and pets, in
English and Chinese, with the gender their pronoun has. Formation reads who a statement is about
with them (``ingest/people.py``); the agent-context gate counts a mention of someone close to the
speaker as a reason to look in memory (``retrieval/context.py``)."""

from __future__ import annotations

#: relation words and the gender their pronoun has ("" when either)
RELATIONS_EN: dict[str, str] = {
    **dict.fromkeys("""brother dad father son husband boyfriend uncle grandpa grandfather nephew stepdad stepfather
stepson grandson fiance""".split(), "m"),
    **dict.fromkeys("""sister mum mom mother daughter wife girlfriend aunt grandma grandmother niece stepmom stepmum
stepmother stepdaughter granddaughter fiancee""".split(), "f"),
    **dict.fromkeys("""friend partner boss manager colleague coworker roommate flatmate housemate cousin neighbour
neighbor teacher coach doctor therapist kid child baby sibling parent spouse classmate mentor""".split(), ""),
}
#: relation words of several people, for "we" and plural subjects
PLURAL_RELATIONS_EN = frozenset("""kids children parents friends sisters brothers siblings sons daughters colleagues
coworkers roommates cousins grandparents family folks""".split())
RELATIONS_ZH: dict[str, str] = {
    **dict.fromkeys("哥哥 弟弟 爸爸 父亲 儿子 老公 丈夫 男朋友 爷爷 外公 叔叔 舅舅 伯伯 姥爷 爸 老爸".split(), "m"),
    **dict.fromkeys("姐姐 妹妹 妈妈 母亲 女儿 老婆 妻子 太太 女朋友 奶奶 外婆 阿姨 姑姑 姥姥 婆婆 妈 老妈".split(), "f"),
    **dict.fromkeys("朋友 同事 老板 领导 室友 同学 孩子 宝宝 表哥 表姐 表妹 表弟 堂哥 堂姐 邻居 老师 对象".split(), ""),
}

#: animals people keep
PETS_EN = frozenset("dog cat puppy kitten pet pets dogs cats rabbit hamster parrot horse".split())
PETS_ZH = ("狗", "猫", "宠物", "狗狗", "猫咪")
