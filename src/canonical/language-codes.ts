// The 183 current ISO 639-1 codes plus "bh" (Bihari), withdrawn in 2021 but still sent by
// older clients: 184 in all.
const ISO_639_1_CODES = new Set(
  (
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy " +
    "da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu " +
    "hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb " +
    "lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om " +
    "or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw " +
    "ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"
  ).split(" "),
);

// Whisper's own names (lower case, as OpenAI's verbose_json `language` reports them) for the
// ISO 639-1 codes Whisper knows.
// A Map, not an object lookup, so inherited keys such as "constructor" are never names.
const NAMES_BY_CODE = new Map<string, string>(Object.entries({
  af: "afrikaans", am: "amharic", ar: "arabic", as: "assamese", az: "azerbaijani", ba: "bashkir",
  be: "belarusian", bg: "bulgarian", bn: "bengali", bo: "tibetan", br: "breton", bs: "bosnian",
  ca: "catalan", cs: "czech", cy: "welsh", da: "danish", de: "german", el: "greek", en: "english",
  es: "spanish", et: "estonian", eu: "basque", fa: "persian", fi: "finnish", fo: "faroese",
  fr: "french", gl: "galician", gu: "gujarati", ha: "hausa", he: "hebrew", hi: "hindi",
  hr: "croatian", ht: "haitian creole", hu: "hungarian", hy: "armenian", id: "indonesian",
  is: "icelandic", it: "italian", ja: "japanese", jv: "javanese", ka: "georgian", kk: "kazakh",
  km: "khmer", kn: "kannada", ko: "korean", la: "latin", lb: "luxembourgish", ln: "lingala",
  lo: "lao", lt: "lithuanian", lv: "latvian", mg: "malagasy", mi: "maori", mk: "macedonian",
  ml: "malayalam", mn: "mongolian", mr: "marathi", ms: "malay", mt: "maltese", my: "myanmar",
  ne: "nepali", nl: "dutch", nn: "nynorsk", no: "norwegian", oc: "occitan", pa: "punjabi",
  pl: "polish", ps: "pashto", pt: "portuguese", ro: "romanian", ru: "russian", sa: "sanskrit",
  sd: "sindhi", si: "sinhala", sk: "slovak", sl: "slovenian", sn: "shona", so: "somali",
  sq: "albanian", sr: "serbian", su: "sundanese", sv: "swedish", sw: "swahili", ta: "tamil",
  te: "telugu", tg: "tajik", th: "thai", tk: "turkmen", tl: "tagalog", tr: "turkish", tt: "tatar",
  uk: "ukrainian", ur: "urdu", uz: "uzbek", vi: "vietnamese", yi: "yiddish", yo: "yoruba",
  zh: "chinese",
}));

const CODES_BY_NAME = new Map(Array.from(NAMES_BY_CODE, ([code, name]) => [name, code]));

/**
 * Whether code is an ISO 639-1 language code. Case-insensitive, because Whisper lower-cases
 * the language it is given, so "EN" works upstream too.
 */
export function isIso6391(code: string): boolean {
  return ISO_639_1_CODES.has(code.toLowerCase());
}

/** The lower-case English name OpenAI reports for a language code ("en" → "english"); unknown codes come back lower-cased. */
export function languageName(code: string): string {
  const lower = code.toLowerCase();
  return NAMES_BY_CODE.get(lower) ?? lower;
}

/** The code for a name as OpenAI reports it ("english" → "en"), or undefined for a name it does not know. */
export function languageCode(name: string): string | undefined {
  return CODES_BY_NAME.get(name.toLowerCase());
}
