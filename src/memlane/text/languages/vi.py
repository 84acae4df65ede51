"""Vietnamese (``pack.py`` says how each list is matched). Written for memlane from how people talk
about themselves in Vietnamese; not from any evaluation set.

Vietnamese words are syllables written apart, so a word of two syllables is a phrase here ("giáo viên",
"làm việc"), and there is no stemmer. Words are compared with their tone marks folded away (``fold``:
"bán" sell, "bạn" friend and "bận" busy all read "ban"; "bỏ" quit and "bố" father read "bo"; đ stays,
"đâu" reads "đau"), so a one-syllable word that would meet a common other word is written inside a phrase
instead ("bán nhà", "bỏ việc", "mẹ tôi", "con chó"). Question words are compared as written, marks
included. Small talk is matched as written too, so its common phrases are also listed without marks.
"""

from memlane.text.languages.pack import Pack

PACK = Pack(
    code="vi",
    name="Vietnamese",
    recall=("biết", "nhớ", "ghi nhớ", "kể", "nói", "tóm tắt", "lưu"),
    broad=("bạn", "cậu", "anh", "chị", "về", "những", "điều", "mọi thứ", "tất cả", "thông tin", "gì", "những gì",
           "đã", "được"),
    stemmer=None,
    # the subject is said: tôi, mình, em, anh … ("Tôi sống ở Huế"); a bare "Đang làm giáo viên" is an answer, rarer
    pro_drop=False,
    # em is how many speak of themselves (to an assistant they call anh / chị); anh and chị, said of oneself
    # too, are left out: they are also "he", "she" (anh ấy, chị ấy) and "you"; ta alone is literary; tớ and
    # tao alone fold onto "to" (big) and "táo" (apple)
    first_person=("tôi", "tui", "mình", "em", "chúng tôi", "chúng mình", "chúng tớ", "chúng ta", "bọn tôi", "bọn mình",
                  "bọn tớ", "bọn em", "tụi tôi", "tụi mình", "tụi tui", "tụi em", "nhà tôi", "nhà mình", "của tôi",
                  "của mình", "của tớ", "của tui", "của em", "của chúng tôi", "bản thân tôi", "bản thân mình"),
    # "my" comes after the noun: "vợ tôi", "vợ của tôi", "nhà mình"; the bare pronoun after a relation word
    # (first_person) is the usual way, "của" + pronoun the explicit one
    possessives=("của tôi", "của mình", "của tớ", "của tui", "của em", "của chúng tôi", "của chúng mình",
                 "của bọn mình", "của tụi mình", "của tụi em", "của bọn em"),
    relations={
        # vợ / chồng alone would meet "vô" (into, in the South) and "chống" (against)
        "spouse": ("vợ tôi", "vợ mình", "vợ em", "vợ anh", "vợ tui", "vợ tớ", "vợ của", "vợ con", "vợ chồng",
                   "chồng tôi", "chồng mình", "chồng em", "chồng chị", "chồng tui", "chồng tớ", "chồng của", "bà xã",
                   "ông xã", "người yêu", "bạn gái", "bạn trai", "hôn thê", "hôn phu", "vị hôn thê", "vị hôn phu",
                   "nửa kia", "người ấy"),
        # con alone is also the classifier of animals ("con chó")
        "child": ("con trai", "con gái", "con tôi", "con mình", "con em", "con tui", "con của", "các con", "con cái",
                  "con nhỏ", "con đầu", "con út", "đứa con", "đứa lớn", "đứa nhỏ", "em bé", "bé nhà", "thằng bé",
                  "con bé", "bé trai", "bé gái", "cháu nội", "cháu ngoại"),
        "sibling": ("anh trai", "chị gái", "em trai", "em gái", "anh chị em", "anh em ruột", "chị em ruột", "anh hai",
                    "chị hai", "anh cả", "chị cả", "em út", "anh ruột", "chị ruột", "em ruột"),
        # bố, mẹ, ba, má, cha alone would meet bỏ, mê, ba (three), mà, chà
        "parent": ("bố tôi", "bố mình", "bố em", "bố tui", "bố tớ", "bố anh", "bố chị", "mẹ tôi", "mẹ mình", "mẹ em",
                   "mẹ tui", "mẹ tớ", "mẹ anh", "mẹ chị", "ba tôi", "ba mình", "ba em", "ba tui", "cha tôi", "cha mình",
                   "bố mẹ", "ba mẹ", "cha mẹ", "ba má", "tía má", "phụ huynh", "bố đẻ", "mẹ đẻ", "bố chồng", "mẹ chồng",
                   "bố vợ", "mẹ vợ", "ông bà"),
        # bạn alone is also "you" (and folds onto bán, bận, bàn)
        "friend": ("bạn bè", "bạn thân", "bạn tôi", "bạn mình", "bạn em", "bạn tui", "bạn của", "người bạn",
                   "bạn cùng phòng", "bạn cùng lớp", "bạn học", "bạn đại học", "đồng nghiệp", "sếp", "cấp trên",
                   "hàng xóm", "bạn trọ", "chủ nhà"),
        # chó alone folds onto "cho" (give, for)
        "pet": ("con chó", "chú chó", "chó con", "chó nhà", "chó cưng", "cún", "cún con", "bé cún", "con mèo",
                "mèo nhà", "mèo con", "mèo cưng", "bé mèo", "thú cưng", "vật nuôi", "con thỏ", "con vẹt", "con chim",
                "cá cảnh", "hamster", "boss nhà"),
        "work": ("công ty", "cơ quan", "văn phòng", "chỗ làm", "nơi làm việc", "công việc", "phòng ban", "nhóm", "team",
                 "trường", "trường học", "nhà máy", "xưởng", "cửa hàng của", "quán của"),
    },
    # compared as written, tone marks included ("sao" asks, "sáo" does not); question words mostly stand
    # where the answer would ("Bạn sống ở đâu?"): those are in question_particles
    question_words=("tại sao", "vì sao", "sao", "làm sao", "làm thế nào", "như thế nào", "thế nào", "ra sao", "ai",
                    "cái gì", "gì", "điều gì", "bao nhiêu", "bao lâu", "bao giờ", "khi nào", "lúc nào", "mấy giờ",
                    "mấy tuổi", "ở đâu", "chỗ nào", "nơi nào", "cái nào", "liệu", "có phải", "phải chăng", "có nên",
                    "có ai", "có cách nào",
                    # typed without tone marks
                    "tai sao", "vi sao", "lam sao", "lam the nao", "nhu the nao", "bao nhieu", "khi nao", "o dau",
                    "cai gi", "co phai"),
    # found anywhere in a clause, so only what asks: không, chưa (also "not", "not yet"), à (folded it is the
    # polite ạ), hả (folded: Hà), nhỉ, chứ, sao (không sao, no problem) are left out, and so are đâu, gì, ai,
    # nào alone (không có gì, nothing; không đi đâu, nowhere)
    question_particles=("phải không", "đúng không", "được không", "hay không", "hay chưa", "có phải", "phải chăng",
                        "phải hông", "đúng hông", "không vậy", "chưa vậy", "vậy hả", "thế hả", "vậy à", "thế à",
                        "thật không", "thật hả", "ở đâu vậy", "ở đâu thế", "đâu vậy", "là gì", "gì vậy", "gì thế",
                        "gì ạ", "ai vậy", "ai thế", "nào vậy", "nào thế", "sao vậy", "sao thế", "như thế nào",
                        "thế nào rồi", "ra sao", "mấy giờ", "mấy tuổi", "khi nào vậy", "không nhỉ", "chưa nhỉ",
                        "không hả", "chưa hả", "không thế", "chưa thế", "bao nhiêu tiền",
                        "bao nhiêu tuổi"),
    requests=("bạn có thể", "bạn có thể giúp", "có thể giúp", "bạn giúp", "giúp tôi", "giúp mình", "giúp em",
              "giúp tui", "giúp", "giúp đỡ", "làm ơn", "vui lòng", "xin vui lòng", "xin hãy", "hãy cho", "hãy giúp",
              "hãy nhắc", "hãy gợi ý", "hãy viết", "hãy giải thích", "hãy liệt kê", "hãy tìm", "hãy kể", "hãy nói",
              "cho tôi", "cho mình", "cho em", "cho tui", "cho hỏi", "cho mình hỏi", "cho em hỏi", "cho tôi hỏi",
              "mình muốn hỏi", "em muốn hỏi", "tôi muốn hỏi", "nhờ bạn", "nhờ bạn giúp", "nhắc tôi", "nhắc mình",
              "nhắc em", "nhắc", "nhắc nhở", "gợi ý", "gợi ý cho", "đề xuất", "đề xuất cho", "giới thiệu cho", "tư vấn",
              "tư vấn cho", "kể cho", "kể tôi nghe", "kể mình nghe", "nói cho", "nói tôi biết", "nói mình biết",
              "chỉ cho", "chỉ giúp", "chỉ mình", "chỉ em", "giải thích", "giải thích giúp", "tìm giúp", "tìm cho",
              "viết giúp", "viết cho", "dịch giúp", "dịch cho", "liệt kê", "tóm tắt", "tôi muốn bạn", "mình muốn bạn",
              "mình cần bạn", "tôi cần bạn"),
    small_talk=("xin chào", "chào", "chào bạn", "chào anh", "chào chị", "chào em", "chào cả nhà", "chào mọi người",
                "chào buổi sáng", "chào buổi chiều", "chào buổi tối", "hello", "hi", "alo", "chúc ngủ ngon", "ngủ ngon",
                "cảm ơn", "cám ơn", "cảm ơn bạn", "cảm ơn nhiều", "cảm ơn rất nhiều", "xin cảm ơn", "cảm ơn nha",
                "cảm ơn nhé", "cảm ơn bạn nhiều", "thanks", "thank you", "thank", "tks", "thanks nha", "không có gì",
                "không sao", "không sao đâu", "gặp lại", "mai gặp", "mai nói chuyện", "không vấn đề gì", "xin lỗi",
                "tạm biệt", "bye", "bye bye", "bai", "bái bai", "hẹn gặp lại", "gặp lại sau", "nói chuyện sau",
                "mai nói tiếp", "ok", "oke", "okê", "okie", "oki", "okay", "được", "được rồi", "được đó", "ừ", "ừm",
                "ờ", "uh", "uhm", "ừa", "dạ", "vâng", "vâng ạ", "dạ vâng", "rồi", "biết rồi", "hiểu rồi",
                "mình hiểu rồi", "em hiểu rồi", "tôi hiểu rồi", "rõ rồi", "tuyệt", "tuyệt vời", "hay quá", "hay đấy",
                "hay ghê", "thú vị", "thú vị quá", "tốt quá", "tốt", "quá tốt", "giỏi quá", "đỉnh", "đỉnh quá", "xịn",
                "xịn quá", "đúng rồi", "chuẩn", "chuẩn luôn", "chắc chắn rồi", "tất nhiên", "dĩ nhiên",
                "bạn khỏe không", "khỏe không", "bạn có khỏe không", "dạo này thế nào", "dạo này sao rồi", "mình khỏe",
                "tôi khỏe", "em khỏe", "khỏe", "vẫn khỏe", "bình thường", "chúc một ngày tốt lành", "một ngày tốt lành",
                "chúc bạn một ngày vui vẻ", "cuối tuần vui vẻ", "vui vẻ", "trời ơi", "ôi", "ồ", "wow", "woa", "uầy",
                "ui", "vậy hả", "thế à", "vậy à", "thật hả", "thật à", "thật sao", "haha", "hihi", "hehe", "kkk", "hic",
                "huhu",
                # typed without tone marks (common in chat)
                "cam on", "camon", "xin chao", "chao", "tam biet", "khong co gi", "duoc roi", "vang", "da", "hieu roi"),
    fillers=("à", "ạ", "ơi", "nhé", "nhe", "nha", "nhá", "hen", "nè", "đó", "đấy", "nhỉ", "vậy", "thế", "thì", "mà",
             "lắm", "quá", "rất", "nhiều", "ghê", "bạn", "anh", "chị", "em", "mọi", "người", "cả", "nhà", "ad", "admin",
             "bot", "rồi", "nữa", "luôn", "cũng", "vẫn", "ok", "vâng", "dạ", "ừ", "có", "không", "ý", "thôi", "mai",
             "sau", "lại", "nhau", "và", "với", "ha", "á", "ấy", "thật", "hì", "hihi", "tối", "nay", "hôm", "gặp",
             # typed without tone marks
             "ban", "nhieu", "lam", "qua", "oi", "a", "roi", "gap", "lai"),
    reasons=("vì", "bởi vì", "bởi", "tại vì", "do", "do là", "là vì", "là do", "vì là", "vì rằng", "bởi lẽ", "nhờ có",
             "với tư cách là", "vốn là"),
    # còn (and / still), rồi (then / already) and song (but; folds onto sống, live) are left out: they stand
    # inside statements as often as between them
    conjunctions=("và", "với lại", "nhưng", "nhưng mà", "tuy nhiên", "cũng như", "đồng thời", "và cả"),
    # chả alone folds onto cha (father)
    negation=("không", "ko", "hông", "chẳng", "chưa", "đừng", "không còn", "chẳng còn", "không bao giờ", "chưa bao giờ",
              "chẳng bao giờ", "chưa từng", "không phải", "không hề", "chẳng hề", "hết", "thôi không", "không nữa",
              "chả bao giờ"),
    # mới (new, just) and nay alone fold onto mọi (every) and này (this)
    # giờ alone is also "o'clock" ("8 giờ")
    now=("bây giờ", "giờ đây", "giờ thì", "hiện tại", "hiện nay", "hiện", "hiện giờ",
         "dạo này", "gần đây", "từ giờ", "từ nay", "kể từ nay", "đang", "lúc này", "hồi này", "mới đây", "vừa",
         "vừa mới", "mới chuyển", "mới bắt đầu", "không còn"),
    stop_words=("là", "của", "và", "có", "được", "đã", "đang", "sẽ", "thì", "mà", "này", "đó", "kia", "ấy", "các",
                "những", "một", "cái", "chiếc", "người", "ở", "tại", "trong", "ngoài", "trên", "dưới", "với", "cho",
                "về", "từ", "đến", "tới", "rất", "lắm", "quá", "cũng", "vẫn", "nữa", "rồi", "không", "tôi", "mình",
                "bạn", "anh", "chị", "em", "nó", "họ", "chúng", "ta", "ra", "vào", "lên", "xuống", "nên", "để", "bị",
                "như", "hay", "hoặc", "nhưng", "vì", "do", "nếu", "khi", "lúc", "nhé", "nha", "ạ", "à", "ơi", "đi",
                "thế", "vậy", "nào", "gì", "đây", "đấy", "nhiều", "ít", "hơn", "nhất", "mọi", "tất cả", "còn", "chỉ"),
    concepts={
        # ở alone is every "at"; sống alone folds onto sông (river), sóng (wave, signal)
        "RESIDENCE": ("sống ở", "sống tại", "đang sống", "sống cùng", "sống với", "sống một mình", "sinh sống",
                      "cư trú", "định cư", "tạm trú", "thường trú", "tôi ở", "mình ở", "tui ở", "tớ ở", "em ở",
                      "nhà tôi ở", "nhà mình ở", "nhà ở", "ở trọ", "thuê trọ", "thuê nhà", "phòng trọ", "quê",
                      "quê quán", "quê nhà", "quê ở", "địa chỉ", "chuyển đến", "chuyển tới", "chuyển về", "chuyển nhà",
                      "dọn đến", "dọn về", "dọn nhà", "chuyển ra", "chuyển vào"),
        # nghề alone folds onto nghe (listen)
        "JOB": ("làm việc", "công việc", "việc làm", "nghề nghiệp", "làm nghề", "nghề của", "nghề tôi", "nghề mình",
                "đi làm", "làm ở", "làm tại", "làm bên", "công tác", "công ty", "nhân viên", "chức vụ", "nghỉ hưu",
                "về hưu", "hưu trí", "thất nghiệp", "nghỉ việc", "bỏ việc", "mất việc",
                "việc mới", "công việc mới", "chuyển việc", "nhảy việc", "khởi nghiệp", "startup", "nghề tự do",
                "làm tự do", "freelance", "freelancer", "kinh doanh", "buôn bán", "làm chủ"),
        # tuổi folds onto tươi (fresh)
        "ANNIVERSARY": ("kỷ niệm ngày cưới", "ngày kỷ niệm"),
        "AGE": ("tuổi", "sinh năm", "sinh vào", "sinh ra", "sinh nhật", "ngày sinh", "năm sinh", "độ tuổi", "tuổi tôi",
                "tuổi mình"),
        "NAME": ("tên", "tên tôi", "tên mình", "tên em", "tôi tên", "mình tên", "em tên", "tên là", "tên thật",
                 "tên đầy đủ", "họ tên", "biệt danh", "gọi tôi là", "gọi mình là", "gọi em là", "cứ gọi"),
        "ALLERGY": ("dị ứng", "bị dị ứng", "không dung nạp", "bất dung nạp", "mẫn cảm"),
        # chay alone folds onto chạy (run), cháy (burn)
        "DIET_VEGETARIAN": ("ăn chay", "người ăn chay", "đồ chay", "món chay", "ăn chay trường", "chay trường",
                            "không ăn thịt", "vegetarian"),
        "DIET_VEGAN": ("thuần chay", "ăn thuần chay", "chay thuần", "vegan"),
        # mê alone folds onto mẹ (mother); yêu onto yếu (weak); ưa onto ủa
        "PREF": ("thích", "rất thích", "yêu thích", "sở thích", "thích nhất", "ưa thích", "ưa chuộng", "chuộng",
                 "đam mê", "mê mẩn", "rất mê", "tôi mê", "mình mê", "em mê", "ghiền", "nghiện", "khoái món",
                 "tôi khoái", "mình khoái", "tôi yêu", "mình yêu", "rất yêu", "hâm mộ", "fan", "cuồng", "ưu tiên",
                 "hứng thú", "quan tâm đến", "ưng ý", "thích thú"),
        "DISLIKE": ("ghét", "rất ghét", "không thích", "chẳng thích", "không ưa", "chẳng ưa", "không chịu được",
                    "không chịu nổi", "chịu không nổi", "ghê tởm", "rất sợ"),
        "PET": ("thú cưng", "vật nuôi", "nuôi", "nuôi chó", "nuôi mèo", "con chó", "chó cưng", "con mèo", "mèo con",
                "mèo cưng", "cún", "boss nhà"),
        "SPOUSE": ("vợ tôi", "vợ mình", "vợ em", "vợ anh", "vợ tui", "chồng tôi", "chồng mình", "chồng em", "chồng chị",
                   "chồng tui", "có vợ", "có chồng", "lấy vợ", "lấy chồng", "kết hôn", "đám cưới", "đã cưới",
                   "mới cưới", "cưới vợ", "cưới chồng", "lập gia đình", "có gia đình", "bà xã", "ông xã", "vợ chồng",
                   "người yêu", "độc thân", "ly hôn"),
    },
    # bán alone folds onto bạn / bận, bỏ onto bố / bộ, cai onto cái, thôi onto thời, rời onto rồi, dừng onto dùng,
    # hủy onto Huy: phrases
    endings=("nghỉ việc", "bỏ việc", "thôi việc", "nghỉ làm", "thôi làm", "xin nghỉ", "từ chức", "giải nghệ",
             "nghỉ hưu", "về hưu", "bị sa thải", "sa thải", "bị đuổi việc", "đuổi việc", "mất việc", "đã bán",
             "bán nhà", "bán xe", "bán căn", "bán hết", "bán rồi", "bán công ty", "bán cửa hàng", "bán quán",
             "sang nhượng", "sang lại", "từ bỏ", "bỏ hẳn", "đã bỏ", "bỏ rồi", "bỏ thuốc", "bỏ học", "bỏ nghề",
             "cai thuốc", "cai rượu", "đã cai", "ngừng", "ngưng", "dừng hẳn", "dừng lại", "chia tay", "ly hôn", "ly dị",
             "đã hủy", "hủy bỏ", "hủy đăng ký", "hủy gói", "đóng cửa", "giải thể", "rời khỏi", "rời bỏ", "rời công ty",
             "tặng lại", "đem cho"),
    moves=("chuyển nhà", "chuyển đến", "chuyển tới", "chuyển về", "chuyển ra", "chuyển vào", "chuyển chỗ ở",
           "chuyển đi", "dọn nhà", "dọn đến", "dọn tới", "dọn về", "dọn sang", "dọn ra", "dời nhà", "định cư",
           "ra ở riêng", "xuất cảnh"),
    starts=("bắt đầu", "mới bắt đầu", "bắt đầu làm", "khởi nghiệp", "mở quán", "mở tiệm", "mở cửa hàng", "mở công ty",
            "mới mở", "thành lập", "gia nhập", "tham gia", "vào làm", "mới vào", "nhận việc", "đăng ký học",
            "nhập học", "làm quen với"),
)
