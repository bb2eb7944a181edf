"""Ordinary lessons in other scripts pass the screen and the gate, and read unchanged in the prompt.

Folding look-alikes must not make the fence or the screen read Cyrillic, Greek, Hebrew, Arabic,
Devanagari or CJK text as a role marker, and dropping combining marks must not touch the marks
those scripts are written with.
"""

from __future__ import annotations

import unicodedata

import pytest

from lamar import Experience, Lamar
from lamar.safety import injection_reason, plain_text, prompt_safe
from lamar.safety.lessons import lesson_refusal

ORDINARY = [
    "Система сборки падает после обновления: очистите кэш и пересоберите",  # Russian, with a colon
    "Пользователь: сообщает об ошибке после деплоя, проверьте логи",
    "Если тесты падают, запустите их по одному с флагом -x",
    "Όταν αποτυγχάνει η μεταγλώττιση, καθαρίστε τον φάκελο build",  # Greek
    "Σύστημα: επανεκκίνηση της υπηρεσίας μετά την αλλαγή ρυθμίσεων",
    "כאשר הבנייה נכשלת, מחק את תיקיית node_modules והתקן מחדש",  # Hebrew
    "הערה: בדוק את קובץ ההגדרות לפני הפריסה",
    "עִבְרִית עִם נִקּוּד: הַמַּעֲרֶכֶת נִכְשֶׁלֶת",  # Hebrew with niqqud (combining marks)
    "عندما يفشل البناء، امسح ذاكرة التخزين المؤقت ثم أعد البناء",  # Arabic
    "مُلاحَظة: تَحَقَّقْ مِنَ السِّجِلّات أَوَّلاً",  # Arabic with harakat
    "जब बिल्ड विफल हो जाए, तो कैश साफ़ करें और फिर से बनाएं",  # Hindi (vowel signs are marks)
    "नोट: परीक्षण अलग-अलग चलाएँ",
    "ビルドが失敗したら、DerivedData を削除してから再ビルドする",  # Japanese
    "注意：依存関係を更新した後はキャッシュを消す",
    "构建失败时，先清除缓存再重新构建",  # Chinese
    "系统：升级后需要重新登录",
    "빌드가 실패하면 캐시를 지우고 다시 빌드하세요",  # Korean
    "사용자: 배포 후 오류를 보고함",
    "เมื่อการคอมไพล์ล้มเหลว ให้ล้างแคชแล้วคอมไพล์ใหม่",  # Thai (vowels and tones are marks)
    "Khi bản dựng thất bại, hãy xóa bộ nhớ đệm rồi dựng lại",  # Vietnamese
    "Կառուցումը ձախողվելիս մաքրեք քեշը",  # Armenian
    "როცა აწყობა ვერ ხერხდება, გაასუფთავეთ ქეში",  # Georgian
    "Wenn der Build fehlschlägt: Cache leeren und neu bauen",  # German
    "Quand la compilation échoue : videz le cache puis recompilez",  # French
    "Cuando falla la compilación, borra la caché y vuelve a compilar",  # Spanish
    "Derleme başarısız olursa önbelleği temizleyin",  # Turkish
    "Kiedy kompilacja się nie udaje, wyczyść pamięć podręczną",  # Polish
    "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ: ᎠᏓᏅᏙ",  # Cherokee, with a colon
    "ꓡꓲꓢꓳ ꓟꓴ: ꓑꓲ",  # Lisu, with a colon
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_an_ordinary_lesson_in_another_script_is_not_refused_and_reads_unchanged(text: str) -> None:
    assert injection_reason(text) is None
    assert lesson_refusal("the build fails", text, "", {"project": "x"}) == ""
    shown = unicodedata.normalize("NFKC", text)  # full-width punctuation becomes ASCII, as it always did
    assert plain_text(text) == shown
    assert prompt_safe(text) == shown
    lam = Lamar(":memory:", seed=1)
    assert lam.get(lam.add(Experience(text, text, text))).action == shown


@pytest.mark.parametrize("code", [
    "read row[user_id] before row[name]",
    "pass options[max_tokens] through",
    "the key is settings[database_url], not settings[db]",
])
def test_a_lowercase_subscript_with_underscores_reads_unchanged_in_the_prompt(code: str) -> None:
    # Mistral's control tokens ([SYSTEM_PROMPT], [TOOL_CALLS]) are capitals; a subscript in code is no token.
    assert prompt_safe(code) == code
