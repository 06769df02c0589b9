#!/usr/bin/env python3
"""Helper of make_tokenizer_fixtures.sh (run that, not this): trains a small SentencePiece Unigram model
with Debian's python3-sentencepiece (Apache-2.0) on the text below, which was written for this fixture,
and converts it to a Hugging Face tokenizer.json.

    python3 make_unigram_fixture.py OUT_DIR TEXTS.json SPM.json

writes OUT_DIR/spiece.model, tokenizer.json and tokenizer_config.json, and SPM.json: for every text in
TEXTS.json, sentencepiece's encode(text, out_type=int), encode(text, out_type=str) and decode(ids), as
[{"text", "ids", "pieces", "decoded"}]. make_spm_bpe_fixture.py reuses CORPUS and write_spm_encodings.

The conversion follows transformers' SpmConverter for a Unigram model (vocab [[piece, score], ...] in id
order, unk_id, byte_fallback as trained; <unk>, <s> and </s> as special added tokens; Metaspace pre-tokenizer
and decoder with prepend_scheme "always"; T5's "$A </s>" template), except for the normalizer. With the
identity rule the model has no precompiled charsmap, and SpmConverter writes Sequence[Strip(right),
Replace(" {2,}" -> "▁")]. sentencepiece's remove_extra_whitespaces (on, as by default) removes leading and
trailing runs of U+0020 only and squeezes inner runs to one, but Strip also removes a trailing "\\n", "\\t",
U+00A0 or U+3000, so "line\\n" would lose its newline in tokenizer.json and keep it in sentencepiece. So the
normalizer here is Sequence[Replace(" +\\z" -> ""), Replace(" {2,}" -> "▁")]: leading spaces become one "▁"
that the Metaspace pre-tokenizer does not double, which is what sentencepiece's dummy prefix gives after it
drops them. With that choice sentencepiece and tokenizers.js agree but where tokenizers.js 0.2.0's Unigram
ignores byte_fallback (it gives <unk> where sentencepiece gives <0xNN> bytes) and on text spelling a control
symbol ("</s>"), which tokenizers.json matches as an added token and sentencepiece does not.
"""
import io
import json
import os
import sys

import sentencepiece as spm

# English prose with some code, punctuation and capitals, some French, German, Spanish and Portuguese with
# accents, Russian, Chinese and Japanese, all written for this fixture. Greek, Thai, Arabic, Devanagari, Korean
# and emoji are left out on purpose, so that the tests' texts in those scripts fall back to bytes.
CORPUS = """
The morning train to the coast leaves at seven, and by half past the carriages are full of people reading.
Some read newspapers, some read books, and a few read the faces of the people opposite, which is cheaper.
The conductor knows most of the passengers by name and all of them by the way they hold their tickets.
When the train stops at the small station by the river, an old man gets on with a basket of apples.
He sells them for a coin each and gives the last one away, every day, to whoever looks most tired.
Nobody has ever asked him why, and he has never explained; it is simply how the morning train works.
At the coast the passengers scatter: to the harbour, to the market, to the offices behind the church.
In the evening they come back, slower and quieter, and the old man is not there, because he never is.
The weather report said it would rain, but the weather report is written in a city far from the sea.
Here the clouds decide for themselves, and today they decided to drift north and leave the town alone.
Children played on the wet sand, dogs chased the waves, and a fisherman mended his nets on the wall.
A tourist asked him what the nets were for, and he said they were for catching tourists, and laughed.
The lighthouse keeper wrote in his ledger every night: the wind, the swell, the ships, and the stars.
He counted the ships that passed and the ones that answered his lamp, and he never missed a night.
In the library there is a shelf of his ledgers, bound in blue cloth, with the years written in gold.
Students come to read them and count the storms, and they always find more storms than they expected.
Reading old handwriting is slow work, but it teaches patience, and patience is rarer than gold.
The bakery opens at six, and the smell of bread reaches the station before the first train arrives.
The baker says that good bread needs three things: flour, water, and time, and that time is the hardest.
She has baked every day for thirty years and has never once been late, not even in the great snow.
In winter the town is quiet; the hotels close, the boats are pulled up, and the wind does the talking.
In summer it is loud again, full of music and visitors and the sound of ice cream melting on stones.
People who live here say they prefer the winter, but they say it in summer, while selling ice cream.
Numbers matter too: the train has 6 carriages, the town has 3 churches, and the harbour holds 120 boats.
In 1987 a storm broke the pier; in 1994 it was rebuilt, and in 2003 it was painted green and white.
The tide tables for 2024 and 2025 are printed on the back of the timetable, which almost nobody reads.
Questions are welcome: what time is it? where is the station? why is the sea so loud tonight?
Answers are rarer, but the librarian keeps a list of them, and the list grows a little every year.
THE HEADLINE READ: QUICK BROWN FOX JUMPS OVER THE LAZY DOG, AND NOBODY KNOWS WHY IT WAS NEWS.
Names on the ferry list: Zoe, Quentin, Xavier, Yvonne, Ulrich, Ingrid, Otto, Karl, Jack, Victor and Wanda.
Prices at the kiosk: $5 for tea, 10% off on Mondays, 3.14 for pie (really!), 1,000 ways to pay; ask @kiosk.
Ratios 1:2 and 3/4, scores 7-3 and 21-19, codes A-12 and B_7, tags <b> and {x} [y] (z) ~ ^ | \\ ` ' " # * + = ;
See https://example.org/tides?year=2024&month=7#table or write to harbour@example.org for the 6.30 tables.
def tide(hour): return [h * 2 for h in range(hour) if h > 0]  # a comment about the tide
int main(int argc, char** argv) { return argc > 1 ? 0 : -1; }  // C++ on the pier's noticeboard
Le matin, le train part à sept heures et arrive à la côte avant huit heures et demie.
Les passagers lisent des journaux, des livres et parfois les visages des voyageurs d'en face.
La boulangère ouvre à six heures; son pain est célèbre, et l'odeur du café remplit la rue étroite.
Où est la gare? C'est près de l'église, après le marché, à côté de l'hôtel fermé en hiver.
Der Zug fährt um sieben Uhr ab, und die Fahrgäste lesen Zeitungen, Bücher und manchmal Gesichter.
Die Bäckerin öffnet um sechs; ihr Brot ist berühmt, und der Geruch erreicht die Straße vor dem Zug.
Im Winter ist die Stadt ruhig, und der Wind erzählt Geschichten über große Stürme und alte Schiffe.
El tren de la mañana sale a las siete y llega a la costa antes de las ocho y media.
La panadera abre a las seis; su pan es famoso y el olor llega a la estación antes que el tren.
¿Dónde está la estación? Está cerca de la iglesia, después del mercado, junto al hotel.
O comboio da manhã parte às sete e chega à costa antes das oito e meia, com muitos passageiros.
A padeira abre às seis; o pão dela é famoso e o cheiro chega à estação antes do comboio.
Утренний поезд к морю уходит в семь часов, и к половине восьмого все вагоны полны людей.
Одни читают газеты, другие читают книги, а некоторые читают лица пассажиров напротив.
Пекарня открывается в шесть, и запах хлеба доходит до станции раньше первого поезда.
Зимой город тихий, гостиницы закрыты, лодки вытащены на берег, и говорит только ветер.
Смотритель маяка каждый вечер записывал в журнал ветер, волны, корабли и звёзды.
早上七点，开往海边的火车出发了，车厢里坐满了看书和看报纸的人。
面包店六点开门，面包的香味比第一班火车更早到达车站。
冬天的小镇很安静，旅馆关门了，船被拉上岸，只有风在说话。
灯塔看守人每天晚上都在本子上写下风、海浪、船和星星。
朝七時、海へ向かう列車が出発し、車両は本や新聞を読む人でいっぱいになる。
パン屋は六時に開き、パンの香りは最初の列車より早く駅に届く。
冬の町は静かで、ホテルは閉まり、船は陸に上げられ、風だけが話している。
灯台守は毎晩、風と波と船と星をノートに書いた。
"""


def train(**settings):
    """A SentencePiece model trained on CORPUS with the fixtures' shared settings (byte fallback, split digits, full
    character coverage, unk/bos/eos 0/1/2 as in Llama, no pad, one thread, no shuffling, a fixed seed) and
    `settings` on top; the model file's bytes."""
    lines = [line for line in CORPUS.split("\n") if line.strip()]
    model = io.BytesIO()
    spm.set_random_generator_seed(20261122)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=1000,
        byte_fallback=True,
        remove_extra_whitespaces=True,
        add_dummy_prefix=True,
        split_digits=True,
        character_coverage=1.0,  # every character of the text; the tests' others fall back to bytes
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        num_threads=1,
        input_sentence_size=0,
        shuffle_input_sentence=False,
        minloglevel=2,
        **settings,
    )
    return model.getvalue()


def train_unigram():
    return train(
        model_type="unigram",
        hard_vocab_limit=False,  # a few KB of text may not hold 1000 pieces; take what it has
        normalization_rule_name="identity",
    )


def convert(sp):
    vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
    unk_id = sp.unk_id()
    added = []
    for i in range(sp.get_piece_size()):
        if sp.is_unknown(i) or sp.is_control(i):
            added.append({"id": i, "content": sp.id_to_piece(i), "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True})
    eos = sp.id_to_piece(sp.eos_id())
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"Regex": " +\\z"}, "content": ""},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"},
        ]},
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}}],
            "special_tokens": {eos: {"id": eos, "ids": [sp.eos_id()], "tokens": [eos]}},
        },
        "decoder": dict(metaspace),
        "model": {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": True},
    }


def write_spm_encodings(sp, texts_file, out_file):
    """Writes out_file: [{"text", "ids", "pieces", "decoded"}] for every text of the JSON array in texts_file,
    with sentencepiece's encode(text, out_type=int), encode(text, out_type=str) and decode(ids)."""
    with open(texts_file, encoding="utf-8") as f:
        texts = json.load(f)
    cases = []
    for text in texts:
        ids = sp.encode(text, out_type=int)
        pieces = sp.encode(text, out_type=str)
        if pieces != [sp.id_to_piece(i) for i in ids]:
            sys.exit("sentencepiece's pieces are not the pieces of its ids for %r" % text)
        cases.append({"text": text, "ids": ids, "pieces": pieces, "decoded": sp.decode(ids)})
    with open(out_file, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False)


def main():
    out_dir, texts_file, spm_file = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    proto = train_unigram()
    if proto != train_unigram():
        sys.exit("make_unigram_fixture: sentencepiece's training is not deterministic here")
    with open(os.path.join(out_dir, "spiece.model"), "wb") as f:
        f.write(proto)
    sp = spm.SentencePieceProcessor(model_proto=proto)
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(convert(sp), f, ensure_ascii=False, indent=2)
        f.write("\n")
    config = {"bos_token": "<s>", "clean_up_tokenization_spaces": False, "eos_token": "</s>",
              "model_max_length": 512, "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>"}
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_spm_encodings(sp, texts_file, spm_file)
    print("unigram: sentencepiece %s, %d pieces, %d bytes of training text"
          % (spm.__version__, sp.get_piece_size(), len(CORPUS.encode("utf-8"))))


if __name__ == "__main__":
    main()
