"""Indonesian (``pack.py`` says how each list is matched). Written for memlane from how people talk
about themselves in Indonesian; not from any evaluation set.

Words are compared on their Snowball stems, which take off the affixes (bekerja, pekerjaan -> kerja;
menjual, dijual -> jual; istriku, namanya -> istri, nama). Where a stem would meet another common word
the form is written as a prefix, which reads the word as written: "perusahaan-" (its stem "usaha" is also
berusaha, to try), "memulai-" (stem "pula", also), "mendirikan-" (stem "diri", self),
"atasan-" (stem "atas", above), "pasangan-" (stem "pasang", to install), "kekasih-" (stem "kasih", as in
terima kasih), "berhubung-" (stem "hubung", to contact). Conjunctions are read as written.
"""

from memlane.text.languages.pack import Pack

PACK = Pack(
    code="id",
    name="Indonesian",
    recall=("tahu", "tau", "ketahui", "kenal", "ingat", "mengingat", "diingat", "ceritakan", "ceritain", "bilang",
            "katakan", "rangkum", "ringkas", "simpan"),
    broad=("kamu", "anda", "kau", "lu", "lo", "tentang", "mengenai", "soal", "semua", "segala", "sesuatu", "hal",
           "informasi", "info", "apa saja", "apa aja", "sejauh ini"),
    stemmer="indonesian",
    # the subject is said: saya, aku, gue ("Saya tinggal di Bandung"); a bare "Lagi di kantor" is a reply
    pro_drop=False,
    # -ku is glued to its noun (rumahku, istriku) and a stem takes it off, so the common ones are written
    # as prefixes (read as written); "aku" is not a prefix: it would find "akun" (account)
    first_person=("saya", "sy", "aku", "aq", "gue", "gua", "gw", "ane", "kami", "kita", "punyaku-", "milikku-",
                  "diriku-", "bagiku-", "menurutku-", "untukku-", "denganku-", "padaku-", "kepadaku-", "namaku-",
                  "umurku-", "usiaku-", "rumahku-", "kamarku-", "kotaku-", "istriku-", "suamiku-", "pacarku-",
                  "anakku-", "ibuku-", "ayahku-", "bapakku-", "mamaku-", "papaku-", "kakakku-", "adikku-", "temanku-",
                  "sahabatku-", "kucingku-", "anjingku-", "kantorku-", "kerjaanku-", "pekerjaanku-", "hobiku-",
                  "keluargaku-", "bosku-"),
    # "my" follows the noun ("istri saya", "rumah kami") or is glued to it (istriku): both are in first_person.
    # The bare pronouns are not listed here, where a word before a noun is read as "my": "Saya anak tunggal"
    # (I am an only child) is not about a child of the speaker's. These are "mine"
    possessives=("punya saya", "punya aku", "punya gue", "punyaku-", "milik saya", "milikku-", "punya kami",
                 "milik kami", "punya kita"),
    relations={
        "spouse": ("istri", "suami", "bini", "pasangan-", "pacar", "pacarku-", "tunangan", "kekasih-", "doi",
                   "calon istri", "calon suami", "cowokku-", "cewekku-", "cowok saya", "cewek saya", "pasutri"),
        "child": ("anak", "anak-anak", "putra", "putri", "bayi", "anak laki-laki", "anak perempuan", "anak sulung",
                  "anak bungsu", "si kecil", "buah hati", "bocil"),
        "sibling": ("kakak", "adik", "abang", "kakak laki-laki", "kakak perempuan", "adik laki-laki", "adik perempuan",
                    "saudara", "saudari", "saudara kandung", "kakak-adik", "adek", "kakakku-", "adikku-"),
        "parent": ("ibu", "ayah", "bapak", "mama", "papa", "mamah", "papah", "bunda", "ibunda", "ayahanda", "orang tua",
                   "orangtua", "ortu", "emak", "bokap", "nyokap", "abah", "umi", "mertua", "ibu mertua",
                   "bapak mertua"),
        "friend": ("teman", "temen", "kawan", "sahabat", "sobat", "bestie", "rekan", "rekan kerja", "kolega", "bos",
                   "atasan-", "manajer", "tetangga", "teman sekamar", "teman kantor", "teman kuliah", "teman sekolah",
                   "pacar teman"),
        "pet": ("kucing", "anjing", "hewan peliharaan", "peliharaan", "anak kucing", "anak anjing", "anabul", "kelinci",
                "burung", "hamster", "guguk", "ikan hias", "kura-kura"),
        "work": ("kantor", "perusahaan-", "pekerjaan", "kerjaan", "tempat kerja", "tim", "sekolah", "kampus", "pabrik",
                 "toko", "bisnis", "startup", "divisi", "instansi"),
    },
    question_words=("apa", "apakah", "siapa", "siapakah", "di mana", "dimana", "ke mana", "kemana", "dari mana",
                    "darimana", "kapan", "kapankah", "mengapa", "kenapa", "knp", "bagaimana", "bagaimanakah", "gimana",
                    "gmn", "berapa", "berapakah", "yang mana", "mana", "emangnya",
                    # as written: their stems are ada, boleh, bisa, harus, perlu, which open statements too
                    "adakah-", "bolehkah-", "bisakah-", "haruskah-", "perlukah-", "benarkah-", "masakah-"),
    # found anywhere in a clause, so only what asks: tidak, nggak, belum, bukan (also "not"), kan (also "after
    # all") and the question words (di mana is also "where" in "kota di mana saya lahir") are left out; -kah is
    # glued (apakah, bisakah): the common words are listed as written ("apakah-": its stem "apa" is in
    # "apa saja", anything)
    question_particles=("apakah-", "kah", "bukankah-", "benarkah-", "masakah-", "ya kan", "ya nggak", "ya gak", "ya ga",
                        "ya enggak", "atau tidak", "atau nggak", "atau gak", "atau ga", "atau enggak", "atau belum",
                        "atau bukan", "bukan begitu", "masa sih", "emangnya"),
    # the imperatives as written where their stem opens statements too: tolong (menolong, to help), jelaskan
    # (jelas, clearly), ingatkan (ingat, remember), carikan (cari kerja, looking for work), coba (mencoba)
    requests=("bisa", "bisakah-", "bisa tolong", "bisa bantu", "bisakah kamu", "bisakah anda", "kamu bisa", "anda bisa",
              "apa kamu bisa", "apakah kamu bisa", "apakah anda bisa", "tolong-", "tolong bantu", "mohon-",
              "mohon bantu", "minta", "minta tolong", "bantu-", "bantu saya", "bantu aku", "bantuin-", "beri tahu",
              "beritahu", "kasih tahu", "kasih tau", "kasitau", "ceritakan-", "ceritain-", "jelaskan-", "jelasin-",
              "rekomendasi-", "saran-", "ingatkan-", "ingetin-", "carikan-", "cariin-", "buatkan-", "bikinin-",
              "tuliskan-", "tulisin-", "terjemahkan-", "coba-", "boleh", "bolehkah-", "saya mau kamu", "aku mau kamu",
              "saya butuh bantuan", "aku butuh bantuan", "saya perlu bantuan", "mau tanya", "saya mau tanya",
              "aku mau tanya", "boleh tanya", "numpang tanya", "please", "pls", "tlg"),
    # wkwk is Indonesian laughter ("haha"); its runs are written out because small talk matches words whole
    small_talk=("halo", "hai", "hi", "hello", "hei", "hey", "selamat pagi", "selamat siang", "selamat sore",
                "selamat malam", "pagi", "siang", "sore", "malam", "met pagi", "met malam", "assalamualaikum",
                "waalaikumsalam", "permisi", "terima kasih", "terimakasih", "terima kasih banyak", "makasih", "makasi",
                "makasih banyak", "trims", "trimakasih", "thanks", "thank you", "thx", "tengkyu", "tq", "sama-sama",
                "sama sama", "samsam", "kembali kasih", "sampai jumpa", "sampai ketemu", "sampai nanti", "dadah", "bye",
                "bye bye", "selamat tinggal", "selamat jalan", "selamat tidur", "met bobo", "oke", "ok", "okey", "okay",
                "oke deh", "oke siap", "sip", "sipp", "siap", "mantap", "mantul", "mantab", "keren", "bagus", "baik",
                "baiklah", "ya", "iya", "yoi", "yup", "betul", "benar", "bener", "setuju", "tentu", "tentu saja",
                "pasti", "paham", "mengerti", "ngerti", "noted", "apa kabar", "kabar baik", "baik-baik saja",
                "baik baik saja", "gimana kabarnya", "gimana kabar", "aku baik", "saya baik", "wkwk", "wkwkwk",
                "wkwkwkwk", "wkwkwkwkwk", "awokwok", "haha", "hehe", "xixi", "xixixi", "wah", "wow", "waduh", "astaga",
                "ya ampun", "aduh", "maaf", "sori", "sorry", "nggak apa-apa", "gak apa-apa", "ga apa-apa",
                "tidak apa-apa", "gapapa", "ga papa", "gpp", "santai", "selamat", "semangat",
                "semoga harimu menyenangkan", "selamat berakhir pekan", "salam", "senang berkenalan", "salam kenal"),
    fillers=("ya", "yah", "iya", "dong", "deh", "sih", "kok", "lho", "loh", "nih", "tuh", "kan", "aja", "saja", "juga",
             "banget", "sekali", "sangat", "kamu", "anda", "kak", "gan", "min", "bro", "sis", "mas", "mbak", "pak",
             "bu", "semua", "semuanya", "lagi", "besok", "nanti", "ok", "oke", "nah", "eh", "oh", "ah", "hmm", "lah",
             "yuk", "ayo", "dulu", "buat", "atas", "bantuannya", "infonya", "sarannya", "jawabannya", "udah", "sudah",
             "sama", "yaa", "yaaa", "nya", "kalian", "teman-teman", "guys"),
    # "soalnya-" as written: its stem "soal" is also a question, a matter ("soal harga")
    reasons=("karena", "karna", "krn", "sebab", "soalnya-", "berhubung-", "lantaran", "gara-gara", "oleh karena",
             "dikarenakan", "sebagai", "sebagai seorang"),
    # read as written (where a sentence is cut); "lalu" is also "last" (bulan lalu), "terus" also "on and on":
    # left out
    conjunctions=("dan", "tapi", "tetapi", "namun", "serta", "sedangkan", "padahal", "dan juga", "kemudian", "plus"),
    negation=("tidak", "tak", "nggak", "ngga", "enggak", "engga", "gak", "ga", "gk", "tdk", "bukan", "belum", "jangan",
              "tidak pernah", "nggak pernah", "gak pernah", "tak pernah", "belum pernah", "tidak lagi", "nggak lagi",
              "gak lagi", "tak lagi", "sudah tidak", "udah nggak", "udah gak", "udah ga", "sudah tak", "bukan lagi"),
    now=("sekarang", "kini", "saat ini", "sekarang ini", "skrg", "skrng", "belakangan ini", "akhir-akhir ini",
         "mulai sekarang", "sejak sekarang", "sedang", "baru", "baru saja", "barusan", "dewasa ini", "sudah", "udah",
         "sdh", "kini sudah"),
    stop_words=("yang", "di", "ke", "dari", "dan", "atau", "ini", "itu", "dengan", "untuk", "pada", "dalam", "adalah",
                "ialah", "akan", "sudah", "telah", "sedang", "masih", "juga", "saja", "aja", "ya", "tidak", "bukan",
                "ada", "saya", "aku", "kamu", "anda", "dia", "ia", "mereka", "kami", "kita", "nya", "para", "si",
                "sang", "oleh", "bagi", "tentang", "karena", "jadi", "tapi", "sangat", "banyak", "lebih", "paling",
                "sekali", "bisa", "mau", "ingin", "harus", "punya", "seorang", "sebuah", "sebagai", "seperti", "kalau",
                "kalo", "jika", "lagi", "pun", "lah", "kah", "sih", "dong", "deh", "kok", "nih", "tuh", "banget",
                "udah", "gue", "gw", "lo", "lu", "yg", "dgn", "utk", "tdk", "sy", "aq", "kan"),
    concepts={
        # "tinggal" alone is also "only … left" ("tinggal dua hari"): with the words that follow it
        "RESIDENCE": ("tinggal di", "tinggal bersama", "tinggal sama", "tinggal bareng", "tinggal dengan",
                      "tinggal sendiri", "tinggal sendirian", "tempat tinggal", "bertempat tinggal", "menetap",
                      "berdomisili", "domisili", "alamat", "kampung halaman", "berasal dari", "asal dari", "asli dari",
                      "aslinya dari", "ngekos", "ngontrak", "kos", "kost", "kosan", "kontrakan", "merantau",
                      "perantauan", "pindah ke", "pindah rumah", "pindahan", "rumah saya", "rumahku-", "warga"),
        "JOB": ("kerja", "bekerja", "pekerjaan", "kerjaan", "kerja sebagai", "bekerja sebagai", "profesi", "karier",
                "karir", "jabatan", "posisi", "karyawan", "pegawai", "staf", "wiraswasta", "wirausaha", "freelance",
                "freelancer", "pekerja lepas", "pensiun", "pensiunan", "menganggur-", "nganggur-", "pengangguran-",
                "phk", "di-phk", "resign", "kantor", "perusahaan-", "bisnis", "startup", "ngantor", "kerja baru",
                "pekerjaan baru"),
        "ANNIVERSARY": ("ulang tahun pernikahan", "hari jadi"),
        "AGE": ("umur", "umurku-", "usia", "usiaku-", "berumur", "berusia", "tahun", "thn", "ulang tahun", "ultah",
                "lahir", "kelahiran"),
        "NAME": ("nama", "namaku-", "nama saya", "nama lengkap", "nama panggilan", "panggil", "dipanggil", "panggilan",
                 "biasa dipanggil", "perkenalkan", "kenalkan", "kenalin"),
        "ALLERGY": ("alergi", "intoleransi", "intoleran", "sensitif terhadap", "tidak tahan", "nggak tahan"),
        "DIET_VEGETARIAN": ("vegetarian", "vegetaris", "tidak makan daging", "nggak makan daging", "gak makan daging",
                            "ga makan daging", "tak makan daging", "pantang daging"),
        "DIET_VEGAN": ("vegan", "veganisme", "pola makan nabati", "plant-based"),
        # "senang" alone is also "glad" ("senang bertemu"); "tertarik" stems to "tarik" (pull): phrases
        "PREF": ("suka", "menyukai", "kesukaan", "sukaku-", "senang dengan", "gemar", "hobi", "hobiku-", "favorit",
                 "doyan", "demen", "cinta", "mencintai", "lebih suka", "lebih memilih", "lebih pilih",
                 "tertarik dengan", "tertarik pada", "tertarik sama", "penggemar", "ngefans", "fans", "fan", "pecinta",
                 "pencinta", "maniak", "hobi saya", "kegemaran"),
        "DISLIKE": ("benci", "membenci", "tidak suka", "nggak suka", "gak suka", "ga suka", "tak suka", "kurang suka",
                    "ogah", "sebel", "sebal", "tidak tahan", "nggak tahan", "gak tahan", "muak", "jijik", "anti"),
        "PET": ("hewan peliharaan", "peliharaan", "memelihara", "melihara", "piara", "kucing", "anjing", "anabul"),
        "SPOUSE": ("istri", "suami", "bini", "pasangan-", "pacar", "tunangan", "menikah", "nikah", "menikahi",
                   "sudah menikah", "kawin", "calon istri", "calon suami", "kekasih-", "lajang", "jomblo", "bercerai",
                   "cerai"),
    },
    # "keluar" alone stems to "luar" (outside), "putus" is also memutuskan (to decide), "udahan" stems to
    # "udah" (already), "meninggalkan" to the stem of "meninggal" (to die): phrases and prefixes
    endings=("berhenti", "berhenti dari", "keluar dari", "resign", "mengundurkan diri", "undur diri", "mundur",
             "menjual", "jual", "dijual", "terjual", "kujual-", "menyerah", "putus dengan", "putus sama", "putus dari",
             "sudah putus", "udah putus", "bercerai", "cerai", "berpisah", "pisah", "menutup", "tutup", "ditutup",
             "membatalkan", "batal", "batalin", "pensiun", "dipecat", "di-phk", "kena phk", "kehilangan",
             "meninggalkan-", "ninggalin-", "udahan-", "stop", "quit", "bubar", "berhentiin", "melepas", "lepasin",
             "mengakhiri-", "akhiri-"),
    moves=("pindah", "berpindah", "pindahan", "pindah rumah", "pindah ke", "boyongan", "merantau", "menetap di",
           "pindah kos", "pindah kota"),
    starts=("mulai", "memulai-", "baru mulai", "mulai kerja", "mulai bekerja", "bergabung", "gabung", "join",
            "baru masuk", "masuk kerja", "mendirikan-", "membuka usaha", "buka usaha", "buka toko", "membuka toko",
            "buka bisnis", "membuka bisnis", "merintis", "diterima kerja", "diterima di", "kerja baru",
            "pekerjaan baru", "ikut kursus", "daftar kuliah", "kuliah lagi"),
)
