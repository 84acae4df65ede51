"""Turkish (``pack.py`` says how each list is matched). Written for memlane from how people talk
about themselves in Turkish; not from any evaluation set.

Words are compared on their Snowball "turkish" stems, which take off the noun endings (case,
possessive, plural: "kedim", "kedimle", "kediler" meet at "kedi"; "yaşındayım" and "yaşım" at
"yaş") but few verb endings ("yaşıyorum" stays "yaşıyor", "yaşadım" becomes "yaşadı"). Verbs are
therefore listed as prefixes of their stem ("çalış-" finds "çalışıyorum", "çalıştım", "çalışmak";
"taşın-" finds "taşındım", "taşınıyoruz"), as are words whose stem would meet a common word: "artık"
stems to "ar", "şimdi" to "ş", "işte" (well / at work) to "iş", "satın" (bought) to "sat" like
"sattım", "karım" (my wife) to "kar" (snow); "yaşıyo-" also finds the spoken "yaşıyom". Turkish says
"I" and "my" with endings ("yaşıyorum", "kedim"), so a statement without a pronoun is the speaker's.

Accents are folded only from a word that has no ı (``pack.fold``): "köpeğim" is read "kopegim" but
"arkadaşım" stays as written. A prefix with ş, ç, ğ, ö or ü and no ı ("başla-") is folded too and so
misses the forms that go on with an ı ("başladım"): those are listed with their ı ("başladı-"), and
nouns are listed whole, for their stem ("arkadaşım" meets "arkadaşlarım" at "arkadaş")."""

from memlane.text.languages.pack import Pack

#: asking the assistant for something as "… -r misin?" / "… -bilir misin?"; the stemmer takes the particle's person
#: ending off ("misiniz", "mısınız" meet "misin", "mısın" at "mi", "mı")
_ASK = (
    "önerir misin", "önerebilir misin", "söyler misin", "söyleyebilir misin", "hatırlatır mısın",
    "hatırlatabilir misin", "yardım eder misin", "yardım edebilir misin", "yardımcı olur musun",
    "yardımcı olabilir misin", "anlatır mısın", "anlatabilir misin", "açıklar mısın", "açıklayabilir misin",
    "bulur musun", "bulabilir misin", "yazar mısın", "yazabilir misin", "yapar mısın", "yapabilir misin",
    "verir misin", "verebilir misin", "gösterir misin", "gösterebilir misin", "çevirir misin", "çevirebilir misin",
    "bakar mısın", "bakabilir misin", "tavsiye eder misin", "tavsiye edebilir misin", "kontrol eder misin",
    "kontrol edebilir misin", "hazırlar mısın", "hazırlayabilir misin", "oluşturur musun", "oluşturabilir misin",
    "düzenler misin", "düzenleyebilir misin", "not alır mısın", "not alabilir misin", "kaydeder misin",
    "kaydedebilir misin", "hesaplar mısın", "hesaplayabilir misin")

PACK = Pack(
    code="tr",
    name="Turkish",
    recall=("biliyor-", "bilir-", "bildiğin-", "hatırlıyor-", "hatırlar-", "hatırladığın-", "anlattı-", "söyledi-",
            "özetle-"),
    broad=("hakkımda", "hakkında", "sen", "siz", "her şey", "herşey", "neler", "şey", "bilgi-", "musun", "misin",
           "musunuz", "misiniz"),
    stemmer="turkish",
    verb_final=True,
    pro_drop=True,
    first_person=("ben", "beni-", "bana-", "bende-", "benden-", "benim-", "bence-", "kendim-", "biz", "bizi", "bize",
                  "bizde", "bizden", "bizim", "bizimle", "bizce"),
    possessives=("benim-", "bizim"),
    relations={
        "spouse": ("eşim", "eş", "karım-", "karıcığım", "kocam", "sevgilim", "sevgili", "nişanlım", "nişanlı",
                   "erkek arkadaşım", "kız arkadaşım", "partnerim", "hayat arkadaşım"),
        "child": ("oğlu-", "oğul", "oğlan-", "kızım", "çocuğum", "çocuk", "bebeğim", "bebek",
                  "evlat-", "yavrum-"),
        "sibling": ("kardeş-", "abim", "abla", "ablam", "ağabey-"),
        "parent": ("anne", "annem", "baba", "babam", "annemler", "babamlar", "ebeveyn-", "ailem-", "anneciğim",
                   "babacığım"),
        "friend": ("arkadaş", "arkadaşım", "dost", "dostum", "kanka-", "meslektaş", "meslektaşım", "patron-", "müdür-",
                   "amir-", "şefim-", "komşu", "komşum", "ev arkadaşım", "oda arkadaşım", "sınıf arkadaşım"),
        "pet": ("köpe-", "kedi-", "evcil hayvan-", "kuş", "kuşum", "muhabbet kuşu", "hamster-", "tavşan", "tavşanı-",
                "kaplumbağa", "balığım-", "yavru kedi", "yavru köpek"),
        "work": ("şirket-", "firma-", "işyer-", "iş yeri", "ofis-", "ekib-", "ekip-", "okul-", "üniversite-",
                 "fabrika-", "departman-", "kurum-", "startup-"),
    },
    question_words=("ne", "neden", "niye-", "niçin", "nasıl", "nerede", "nereye", "nereden", "nere-", "ne zaman",
                    "ne kadar", "hangi", "hangisi", "kim", "kime-", "kimi-", "kaç", "kaça", "kaçta",
                    "acaba", "sence-"),
    #: the particle takes person endings ("misin", "mıyım", "musunuz"): the stemmer brings them back to these four
    question_particles=("mi", "mı", "mu", "mü", "acaba"),
    requests=_ASK + (
        "öner", "önerin", "önersene", "söyle", "söyleyin", "söylesene", "hatırlat", "hatırlatın", "hatırlatsana",
        "anlat", "anlatın", "anlatsana", "açıkla-", "göster", "gösterin", "yardım et", "yardım edin",
        "yardım etsene", "tavsiye et", "tavsiye edin", "bana söyle", "bana öner", "bana yardım", "lütfen", "lutfen",
        "rica etsem", "rica ediyorum", "bir şey soracağım", "bir şey sorabilir miyim", "yardıma ihtiyacım var",
        "tavsiyen var mı", "önerin var mı", "fikrin var mı"),
    small_talk=("merhaba", "merhabalar", "mrb", "slm", "selam", "selamlar", "selamün aleyküm", "selamun aleykum",
                "aleyküm selam", "aleykum selam", "günaydın", "iyi günler", "iyi akşamlar", "iyi geceler", "tünaydın",
                "hoş geldin", "hoş geldiniz", "hoş bulduk", "teşekkürler", "teşekkür ederim", "teşekkür ederiz",
                "çok teşekkürler", "çok teşekkür ederim", "çok teşekkür ederiz", "teşekkürler yardımın için",
                "yardımın için teşekkürler", "yardımın için teşekkür ederim", "sağ ol", "sağol", "sağ olun", "sağolun",
                "çok sağ ol", "eyvallah", "mersi", "tşk", "tşkler", "tşk ederim", "tesekkurler", "sagol", "rica ederim",
                "ne demek", "bir şey değil", "önemli değil", "hoşça kal", "hoşçakal", "hoşça kalın", "görüşürüz",
                "görüşmek üzere", "sonra görüşürüz", "yarın görüşürüz", "bay bay", "bye", "kendine iyi bak",
                "kendinize iyi bakın", "iyi çalışmalar", "kolay gelsin", "iyi tatiller", "iyi hafta sonları",
                "iyi eğlenceler", "afiyet olsun", "geçmiş olsun", "eline sağlık", "ellerine sağlık", "allah'a emanet",
                "allaha emanet", "tamam", "tamamdır", "tmm", "tamam o zaman", "olur", "olur tabii", "peki", "anladım",
                "anlaşıldı", "anlaştık", "harika", "süper", "mükemmel", "çok iyi", "çok güzel", "güzel", "müthiş",
                "şahane", "efsane", "on numara", "nasılsın", "nasılsınız", "naber", "ne haber", "ne var ne yok",
                "nasıl gidiyor", "iyiyim", "iyiyiz", "ben de iyiyim", "iyi", "fena değil", "idare eder", "sen nasılsın",
                "siz nasılsınız", "tabii", "tabi", "tabii ki", "elbette", "kesinlikle", "aynen", "aynen öyle",
                "doğru", "haklısın", "evet", "vay", "vay be", "vay canına", "oha", "hmm", "haha", "hahaha", "jsjsjs",
                "jsjsjsjs", "sjsjsj", "skdjsk", "ahahah", "memnun oldum", "tanıştığıma memnun oldum", "ben de",
                "sen de", "size de", "sana da", "sana da teşekkürler", "inşallah", "maşallah", "bravo", "helal"),
    fillers=("evet", "hayır", "yok", "tamam", "ok", "peki", "ya", "yaa", "yani", "işte", "şey", "hani", "de", "da",
             "çok", "sen", "siz", "sana", "size", "seni", "sizi", "ve", "o", "zaman", "bu", "şu", "bir", "hem",
             "zaten", "gerçekten", "cidden", "dostum", "kanka", "abi", "abla", "hocam", "bot", "canım", "bugün",
             "yarın", "tekrar", "yine", "her", "için", "ee", "eee", "hı", "hıhı", "hmm", "of", "off", "ay",
             "aa", "oo", "süper", "gayet", "ki"),
    reasons=("çünkü", "zira", "madem", "mademki", "olduğum için", "olduğumuz için", "olduğu için", "nedeniyle",
             "dolayı", "sebebiyle"),
    conjunctions=("ve", "ama", "fakat", "ancak", "lakin", "ayrıca", "hem de", "üstelik"),
    #: Turkish negates a verb inside it ("yaşamıyorum": I do not live): the negated forms of the concepts' verbs
    negation=("değil", "değilim", "değiliz", "yok", "hayır", "hiç", "asla-", "hiçbir", "hiçbir zaman", "artık değil",
              "artık yok", "yaşamıyor-", "oturmuyor-", "çalışmıyor-"),
    now=("artık-", "şimdi-", "şu an", "şu anda", "bugünlerde-", "son zamanlarda", "günümüzde-",
         "bundan sonra", "yakın zamanda", "geçenlerde"),
    stop_words=("ve", "ile", "ama", "de", "da", "ki", "mi", "mı", "mu", "mü", "bir", "bu", "şu", "o", "ben", "sen",
                "biz", "siz", "onlar", "beni", "bana", "benim", "seni", "sana", "senin", "onu", "ona", "onun", "bizim",
                "sizin", "için", "gibi", "kadar", "daha", "çok", "en", "ya", "veya", "yani", "her", "hep", "şey", "ne",
                "var", "yok", "değil", "olarak", "olan", "oldu", "ise", "sonra", "önce", "diye", "bile", "hem",
                "çünkü", "ayrıca", "şimdi", "artık", "zaten", "biraz"),
    concepts={
        "RESIDENCE": ("yaşıyo-", "yaşadı-", "yaşamak", "yaşayacağı-", "yaşamıyor-", "oturmuyor-",
                      "oturuyo-", "ikamet-", "taşın-", "yerleş-"),
        "JOB": ("çalış-", "çalışmıyor-", "işim-", "işimiz-", "işten-", "işyer-", "iş yeri", "meslek-", "mesleğ-",
                "emekli-", "işsiz-", "freelance-", "serbest meslek", "pozisyon-", "görevim-", "kariyer-", "işe gir-",
                "işe başla-", "işe başladı-", "kendi işim"),
        "ANNIVERSARY": ("yıldönümü-", "yıl dönümü"),
        "AGE": ("yaş", "yaşındayım", "yaşına", "doğum gün-", "doğdum", "doğmuşum"),
        "NAME": ("adım", "ismi-", "soyad-", "diye çağır-", "diye hitap"),
        "ALLERGY": ("alerj-", "intolerans-", "hassasiyet-"),
        "DIET_VEGETARIAN": ("vejetaryen-", "vejeteryan-", "vejeteryen-", "vejetaryan-", "et yemiyor-", "et yemem",
                            "et yemeyi bıraktım"),
        "DIET_VEGAN": ("vegan-", "bitkisel beslen-", "hayvansal ürün"),
        "PREF": ("seviyo-", "severim", "severiz", "sever", "sevdim", "sevdiğim", "en sevdiğim",
                 "bayılıyor-", "bayılırım", "bayıldım", "tercih-", "favori-", "hoşlanıyor-", "hoşlanırım",
                 "hoşuma gid-", "hoşuma git-", "meraklı-", "düşkün-", "hayranı-", "hayranıyım", "hobi-", "tutkun-",
                 "ilgileniyor-"),
        "DISLIKE": ("sevmiyo-", "sevmem", "sevmeyiz", "sevmez", "nefret-", "hoşlanmıyor-", "hoşlanmam",
                    "hoşuma gitmiyor", "hoşuma gitmez", "katlanamıyor-", "katlanamam", "dayanamıyor-", "tiksin-",
                    "iğren-", "hiç sevmem"),
        "PET": ("evcil hayvan-", "köpe-", "kedi-", "kuş", "kuşum", "muhabbet kuşu", "hamster-", "tavşan", "tavşanı-",
                "kaplumbağa", "balığım-"),
        "SPOUSE": ("eşim", "karım-", "kocam", "evli-", "evlen-", "sevgilim", "nişanlı-", "nişanlan-", "nişanlandı-",
                   "erkek arkadaşım", "kız arkadaşım", "partnerim", "hayat arkadaşım"),
    },
    endings=("ayrıl-", "istifa-", "sattı-", "satıyor-", "satacağı-", "satmak", "satmaya", "bırak-", "vazgeç-", "boşan-",
             "boşandı-", "boşanıyor-", "kovul-", "kovdu-", "işten çıkar-", "çıkarıldım", "işten çıktım", "iptal-",
             "kapat-", "son verdim", "son verdik", "terk-", "emekli oldum", "kaybet-", "sildi-", "ilişkimizi bitirdik",
             "sahiplendirdim", "elden çıkardım"),
    moves=("taşın-", "göç-", "yerleş-", "yurt dışına çıktım"),
    starts=("başla-", "başladı-", "başlıyor-", "başlayacağı-", "işe girdim", "işe alındım", "kurdum", "kurduk", "açtı-",
            "kaydoldum", "kayıt oldum", "katıldım", "edindim", "sahiplendim", "kabul edildim"),
)
