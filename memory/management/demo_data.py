"""The demo world that `seed_demo` writes: people, agents, conversations, what was remembered and
how those memories are linked.

All of it was written for this project. The content is fixed; `seed_demo --seed N` only varies
ids, timing, channels and review metadata, so every seed tells the same stories.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DemoMemory:
    memory_type: str  # "memory", "fact", "preference" or "guideline"
    content: str
    tags: tuple[str, ...]
    ttl_days: int | None = None  # a lifetime counted from creation, still running after seeding
    expired: bool = False  # an event weeks ago with a short lifetime: already expired when seeded
    key: str | None = None  # the name DEMO_LINKS knows it by
    # In a thread: the exchanges (0-based indexes into DemoThread.exchanges) it was drawn from. Its
    # provenance names their messages, the user's and the assistant's; empty: not said in the thread.
    said_in: tuple[int, ...] = ()


@dataclass(frozen=True)
class DemoLink:
    """source → target, read "source <relation_type> target" (a supersedes link makes its target
    invalid, as do refines and duplicates); `opposite` for a custom type's reverse label."""

    source: str
    relation_type: str
    target: str
    opposite: str | None = None
    by_llm: bool = False  # made by automatic linking (its metadata says so), for the review queue


@dataclass(frozen=True)
class DemoCorrection:
    """A reviewer's edit of a memory at the dashboard: the memory as an agent wrote it, and as corrected."""

    reviewer: str
    content: str
    corrected: str


@dataclass(frozen=True)
class DemoThread:
    slug: str
    user_id: str
    agent_id: str
    title: str
    topic: str
    tags: tuple[str, ...]
    exchanges: tuple[tuple[str, str], ...]  # (user message, assistant reply)
    memories: tuple[DemoMemory, ...]


def fact(content: str, *tags: str, **flags) -> DemoMemory:
    return DemoMemory("fact", content, tags, **flags)


def preference(content: str, *tags: str, **flags) -> DemoMemory:
    return DemoMemory("preference", content, tags, **flags)


def memory(content: str, *tags: str, **flags) -> DemoMemory:
    return DemoMemory("memory", content, tags, **flags)


def guideline(content: str, *tags: str, **flags) -> DemoMemory:
    return DemoMemory("guideline", content, tags, **flags)


USERS = {
    "alice": (
        "Alice Moreau, product designer in Lyon. Vegetarian, training for her first half marathon, "
        "planning a long weekend in Lisbon with her partner Sam."
    ),
    "bruno": (
        "Bruno Okafor, backend engineer in Manchester (Python and Go). Bakes sourdough at weekends and "
        "is building an emergency fund."
    ),
    "chen": (
        "Chen Wei, secondary-school biology teacher in Vancouver. Runs a teachers' book club, is learning "
        "Japanese and plans a trip to Kyoto."
    ),
    "dana": (
        "Dana Kowalski, data analyst in Kraków learning Python. Grows vegetables on her balcony and hosts "
        "an English-language book club."
    ),
}

AGENTS = {
    "atlas": (
        "Atlas, an everyday planning assistant for travel, meals, money, reading and training plans. "
        "Friendly and concise; never books or buys anything without confirmation."
    ),
    "patch": (
        "Patch, a software engineering assistant for debugging and code review. Asks for a minimal "
        "reproduction, explains root causes and suggests regression tests."
    ),
}

USER_MEMORIES = {
    "alice": (
        fact("Alice lives in Lyon and works as a product designer.", "profile", "work"),
        fact("Alice's partner is Sam; they often travel together.", "profile", "family", "travel", key="alice-sam"),
        preference("Alice prefers concise answers with bullet points.", "communication"),
        preference("Alice prefers the train to short flights when the journey takes under five hours.", "travel"),
    ),
    "bruno": (
        fact("Bruno is a backend engineer in Manchester working mainly in Python and Go.", "profile", "work"),
        preference("Bruno wants code examples in Python unless he asks for another language.", "coding"),
        preference("Bruno prefers grams and Celsius in recipes.", "cooking", "units"),
    ),
    "chen": (
        fact("Chen teaches biology at a secondary school in Vancouver.", "profile", "work"),
        preference("Chen likes reminders a week before any deadline.", "reminders"),
    ),
    "dana": (
        fact("Dana is a data analyst in Kraków who is learning Python.", "profile", "work"),
        preference("Dana prefers explanations with small runnable examples.", "coding", "communication"),
        preference("Dana's first language is Polish; English is fine for technical topics.", "communication"),
    ),
}

NEAR_DUPLICATES = {
    # What agents keep writing again in other words, months in: each restates a memory above or
    # one of a thread's, for the duplicate finder (/review/duplicates/) to group with it.
    "alice": (
        fact("Alice works as a product designer and lives in Lyon.", "profile", "work"),
        preference("Alice prefers concise answers in bullet points.", "communication"),
        preference("Alice prefers short, concise answers with bullet points.", "communication"),
        preference("Alice dislikes coriander; use parsley or mint instead.", "diet", "cooking"),
    ),
    "bruno": (preference("Bruno prefers recipes in grams and Celsius.", "cooking", "units"),),
    "chen": (fact("Chen is allergic to shellfish (shrimp, crab).", "health", "food"),),
    "dana": (preference("Dana prefers explanations with small, runnable code examples.", "coding"),),
}

AGENT_GUIDELINES = {
    "atlas": (
        guideline("Never book, buy or pay for anything on the user's behalf without explicit confirmation.", "safety"),
        guideline(
            "Add a short note that money guidance is general information, not personalised financial advice.",
            "finance",
            "compliance",
        ),
        guideline(
            "Check stored dietary restrictions and allergies before suggesting restaurants, recipes or menus.",
            "food",
            "health",
        ),
        guideline("Use metric units and 24-hour times unless the user asks otherwise.", "style"),
        guideline("When a plan changes, restate the updated plan in one short summary.", "style"),
        guideline("For pain or injuries, suggest seeing a professional if symptoms last longer than a week.", "health"),
        guideline("Always answer in under 100 words.", "style", key="atlas-100-words"),
        guideline(
            "Keep answers brief by default, but give full step-by-step detail when the user asks for a plan.",
            "style",
            key="atlas-brief",
        ),
    ),
    "patch": (
        guideline("Ask for the smallest reproducible example before proposing a fix.", "debugging"),
        guideline("Explain the root cause before the fix, and suggest a regression test for every bug.", "debugging"),
        guideline("Never suggest disabling TLS verification or committing secrets, even temporarily.", "security"),
        guideline(
            "Prefer standard-library tools (tracemalloc, cProfile, pdb) before recommending third-party packages.",
            "tooling",
        ),
        guideline("Show commands and code in fenced blocks with the language named.", "style"),
        guideline("When suggesting a mitigation, say that it is a stopgap and name the real fix.", "debugging"),
    ),
}

THREADS = (
    DemoThread(
        slug="lisbon-long-weekend",
        user_id="alice",
        agent_id="atlas",
        title="Lisbon long weekend",
        topic="travel",
        tags=("travel", "lisbon", "spring"),
        exchanges=(
            (
                "Sam and I want a long weekend in Lisbon in early spring. Is late March a good time?",
                "Late March is a nice pick: highs around 18–20°C and fewer crowds than at Easter. Expect a few "
                "showers, so pack a light rain jacket. Do you have dates in mind?",
            ),
            (
                "Thursday the 26th to Monday the 30th. We'd fly from Lyon.",
                "There are direct flights from Lyon most days, about 2h20. A Thursday morning departure and a "
                "Monday evening return give you four full days. Shall I look at neighbourhoods?",
            ),
            (
                "Yes please. We like walking and don't want to be somewhere too touristy at night.",
                "Three good fits: Príncipe Real (quiet, leafy, great cafés), Campo de Ourique (residential, its "
                "own market) and Graça (viewpoints, steep). For walking everywhere with calm evenings I'd lean "
                "towards Príncipe Real.",
            ),
            (
                "Príncipe Real sounds lovely. Our budget is around 150 euros a night.",
                "That's realistic there for a guesthouse or a small hotel in March. Many old buildings have "
                "steep stairs, so I'd filter for a lift or a low floor.",
            ),
            (
                "Free cancellation is a must. Also, I'm vegetarian; Sam eats everything.",
                "Noted. Lisbon is easy for vegetarians now, and most tascas will do grilled vegetables or a "
                "bean dish. I'll flag places where you'd both be happy.",
            ),
            (
                "Is a day trip to Sintra worth it?",
                "Yes, if you go early. The train from Rossio takes about 40 minutes; be at Pena Palace at "
                "opening with timed tickets booked online. If you only have energy for two sites, add Quinta "
                "da Regaleira.",
            ),
            (
                "Can we avoid the tour-bus crowds there?",
                "Go on the Friday rather than at the weekend, start at Pena at opening and walk down to "
                "Regaleira instead of taking the shuttle. Lunch in the old town after 14:00 is calmer.",
            ),
            (
                "Sam really wants to hear some fado.",
                "For something intimate, look at small houses in Alfama or Mouraria where singers rotate "
                "through the evening. Reserve dinner for around 20:30 and expect a minimum spend.",
            ),
            (
                "Found a guesthouse near the Jardim do Príncipe Real, 140 a night, free cancellation until 48 "
                "hours before.",
                "That fits the budget and the area. I'd book it and keep the confirmation. Want a day-by-day "
                "plan around it?",
            ),
            (
                "Yes, but keep Saturday relaxed.",
                "Draft: Thursday, arrive and walk the Príncipe Real gardens. Friday, Sintra early. Saturday, "
                "slow morning, LX Factory, sunset at Senhora do Monte. Sunday, Belém and a fado dinner. "
                "Monday, Feira da Ladra market, then the airport.",
            ),
            (
                "I think Feira da Ladra is only on Tuesdays and Saturdays.",
                "You're right. Let's move Feira da Ladra to the weekend, before LX Factory, and keep Monday for "
                "the Campo de Ourique market before the flight back to Lyon.",
            ),
            (
                "How should we get around Lisbon? We'd rather walk than take taxis.",
                "Get a Navegante card at the airport metro station and load it with Zapping credit: it is valid "
                "on the metro, trams, buses and the Sintra train. The metro to the centre takes 25 minutes.",
            ),
            (
                "Perfect. Can you remind me a week before to book the fado dinner in Alfama?",
                "Will do: a reminder on the 19th to book the fado dinner for the 29th. I've saved the Lisbon "
                "trip (26 to 30 March, the guesthouse in Príncipe Real, quiet neighbourhoods and walking "
                "everywhere, vegetarian-friendly places for you and Sam) so we can pick this up any time.",
            ),
        ),
        memories=(
            fact(
                "Alice and Sam plan a Lisbon long weekend from Thursday 26 to Monday 30 March, flying from Lyon.",
                "travel",
                "lisbon",
                key="lisbon-trip",
                said_in=(0,),
            ),
            preference(
                "Alice prefers quiet neighbourhoods at night and walking everywhere when travelling.",
                "travel",
                key="lisbon-quiet",
                said_in=(2,),
            ),
            memory(
                "A guesthouse near Jardim do Príncipe Real is held for Alice until Friday; confirm it or the hold "
                "is released.",
                "travel",
                "booking",
                expired=True,
                said_in=(8,),
            ),
            preference(
                "Sam wants to hear live fado; book a Sunday dinner table in Alfama or Mouraria.",
                "travel",
                "lisbon",
                ttl_days=90,
                said_in=(7,),
            ),
            preference(
                "Alice wants to stay in Alfama in Lisbon.", "travel", "lisbon", key="lisbon-alfama", said_in=(7,)
            ),
            preference(
                "For Lisbon, Alice wants to stay in Príncipe Real rather than Alfama: calm at night and walkable.",
                "travel",
                "lisbon",
                key="lisbon-principe-real",
                said_in=(2, 8),
            ),
            fact(
                "Alice is vegetarian; Sam eats everything.", "diet", "vegetarian", key="lisbon-vegetarian", said_in=(4,)
            ),
        ),
    ),
    DemoThread(
        slug="kyoto-in-autumn",
        user_id="chen",
        agent_id="atlas",
        title="Kyoto in autumn",
        topic="travel",
        tags=("travel", "japan", "kyoto"),
        exchanges=(
            (
                "I'm thinking of Kyoto next November for the autumn colours. Is it too crowded?",
                "Mid to late November is peak season for the leaves, so famous temples will be busy, but early "
                "starts and a few lesser-known spots make it manageable. How many days are you thinking?",
            ),
            (
                "Ten days in Japan in total, maybe five in Kyoto.",
                "Five days in Kyoto lets you see the big sights early and spend afternoons somewhere quieter, "
                "like Ohara or Kurama. Are you flying into Osaka or Tokyo?",
            ),
            (
                "Probably Tokyo from Vancouver, then the shinkansen.",
                "Tokyo to Kyoto on the Nozomi takes about 2h15. Since the price rise, a Japan Rail Pass rarely "
                "pays off for a simple route; individual tickets are usually cheaper.",
            ),
            (
                "Tokyo three days, Kyoto five, Osaka two, then fly home from Osaka.",
                "Then it's one-way Tokyo to Kyoto plus a short local train to Osaka: buy individual tickets. "
                "Flying home from Kansai saves you the trip back to Tokyo.",
            ),
            (
                "Where should I stay in Kyoto? I don't drive and I like walking.",
                "Stay near Shijo or Karasuma stations: central, on two lines, and walkable to Gion and Nishiki "
                "Market. Kyoto Station is practical for day trips but less charming at night.",
            ),
            (
                "I'd love one night in a ryokan.",
                "A ryokan in Ohara gives you hot springs and autumn leaves with far fewer visitors than "
                "Arashiyama. Dinner is usually a kaiseki meal; mention any dietary needs in advance.",
            ),
            (
                "I'm allergic to shellfish. Is that a problem for kaiseki?",
                "It can be handled, but say so clearly and in writing when booking: shrimp and crab appear "
                "often in kaiseki. I'd also carry a printed allergy card in Japanese.",
            ),
            (
                "Can you write the allergy card text?",
                "Here's a version: 「私は甲殻類（エビ・カニ）と貝類にアレルギーがあります。"
                "少量でも食べられません。」 It says you are allergic to crustaceans and shellfish "
                "and can't eat even small amounts. Have a native speaker check it.",
            ),
            (
                "Which temples are worth the early start?",
                "Fushimi Inari at 7:00, Kiyomizu-dera at opening, and Tofuku-ji for its maple valley, which is "
                "busiest at peak, so be there when it opens at 8:30. Eikando has evening illuminations.",
            ),
            (
                "How much cash should I carry?",
                "Cards are widely accepted now, but small temples, some restaurants and buses still want cash. "
                "Around 10,000–20,000 yen is comfortable; convenience-store ATMs take foreign cards.",
            ),
            (
                "When should I book?",
                "Kyoto hotels for the autumn peak fill early: reserve about five months ahead, ideally by June. "
                "Shinkansen tickets go on sale a month before travel.",
            ),
            (
                "Okay, I'll aim for June for the hotels.",
                "Noted: five nights near Shijo, one ryokan night in Ohara, reserve by June, individual shinkansen "
                "tickets rather than a Rail Pass, shellfish allergy card. Would you like a reminder in May?",
            ),
            (
                "Yes, early May please.",
                "Done: a reminder in early May to reserve the Kyoto hotel near Shijo and the ryokan in Ohara for "
                "your November trip to Japan. As you're allergic to shellfish, I'll bring up the allergy card "
                "when we choose restaurants.",
            ),
        ),
        memories=(
            fact(
                "Chen plans ten days in Japan next November: Tokyo 3, Kyoto 5, Osaka 2, flying from Vancouver "
                "and home from Kansai.",
                "travel",
                "japan",
                key="kyoto-trip",
                said_in=(1, 2, 3),
            ),
            fact("Chen is allergic to shellfish and crustaceans (shrimp, crab).", "health", "allergy", said_in=(6,)),
            preference(
                "In Kyoto Chen wants to stay near Shijo/Karasuma and spend one night in a ryokan in Ohara.",
                "travel",
                "kyoto",
                said_in=(4,),
            ),
            memory(
                "Remind Chen in early May to book the Kyoto hotel and the Ohara ryokan.",
                "reminder",
                ttl_days=180,
                said_in=(12,),
            ),
            memory(
                "Chen plans to buy a 7-day Japan Rail Pass.", "travel", "japan", key="kyoto-rail-pass", said_in=(2,)
            ),
            memory(
                "Chen will buy individual shinkansen tickets rather than a Japan Rail Pass; they go on sale a month "
                "before travel.",
                "travel",
                "japan",
                key="kyoto-tickets",
                said_in=(2, 10),
            ),
        ),
    ),
    DemoThread(
        slug="sourdough-starter",
        user_id="bruno",
        agent_id="atlas",
        title="Reviving a sourdough starter",
        topic="cooking",
        tags=("cooking", "baking", "sourdough"),
        exchanges=(
            (
                "My sourdough starter smells like nail polish remover. Did I kill it?",
                "Almost certainly not. That acetone smell means it's hungry. Feed it more often or at a higher "
                "ratio and it should bounce back in a day or two.",
            ),
            (
                "I feed it once a day, 1:1:1.",
                "At room temperature that's often not enough. Try 1:2:2 (starter:flour:water) twice a day for a "
                "few days; if your kitchen is warm, go to 1:3:3.",
            ),
            (
                "My kitchen is about 24°C.",
                "That's on the warm side, so it peaks fast, maybe 4–6 hours after feeding. 1:3:3 twice a day "
                "should keep it from going hungry. Discard before each feed.",
            ),
            (
                "What flour? I've been using plain white.",
                "White works, but 10–20% wholemeal rye gives the microbes more nutrients and makes the starter "
                "livelier. Keep the rest white for a milder loaf.",
            ),
            (
                "How do I know when it's ready to bake with?",
                "It should reliably double within 4–8 hours of feeding, look domed and bubbly and smell "
                "pleasantly tangy. Use it at or just before its peak.",
            ),
            (
                "It doubled in five hours today. A recipe for a first loaf?",
                "500 g bread flour, 350 g water, 100 g active starter, 10 g salt. Mix flour and water, rest 45 "
                "minutes, add starter and salt, then do four sets of stretch-and-folds 30 minutes apart.",
            ),
            (
                "Then what?",
                "Bulk ferment until it has grown about 50% and looks airy, roughly 4–5 hours at 24°C. Shape a "
                "tight ball, put it in a floured basket and refrigerate for 12–16 hours.",
            ),
            (
                "I don't have a banneton.",
                "A bowl lined with a tea towel dusted generously with rice flour works just as well. Rice flour "
                "matters: wheat flour can glue the dough to the towel.",
            ),
            (
                "I have a cast iron pot for baking.",
                "Perfect. Preheat the oven with the pot inside at 250°C for 45 minutes. Bake covered for 20 "
                "minutes, then uncover, drop to 230°C and bake 20–25 minutes more.",
            ),
            (
                "The first loaf came out dense with a big hole under the crust.",
                "That usually means under-fermentation: gas collected in one pocket. Let bulk go longer, until "
                "the dough is clearly puffy, and shape a bit tighter.",
            ),
            (
                "Second loaf is much better, open crumb! But the bottom burned a little.",
                "Congratulations on the open crumb! Put a baking sheet on the rack below the pot or bake one rack "
                "higher; some ovens have a strong bottom element.",
            ),
            (
                "Can I keep the sourdough starter in the fridge? I only bake at weekends.",
                "Yes. Feed it, leave it an hour, then refrigerate. Take it out Thursday evening, feed it twice on "
                "Friday, and it'll be ready for a Saturday mix.",
            ),
            (
                "Great, that schedule works for me.",
                "Saved: the starter lives in the fridge during the week; feed it Thursday night and twice on "
                "Friday, mix Saturday morning, bake Sunday morning after the overnight proof.",
            ),
        ),
        memories=(
            fact(
                "Bruno keeps a sourdough starter and bakes at weekends; his kitchen is about 24°C.",
                "baking",
                said_in=(2, 11),
            ),
            preference(
                "Bruno's baking schedule: starter out Thursday night, fed twice on Friday, mix Saturday, bake "
                "Sunday morning.",
                "baking",
                "schedule",
                said_in=(12,),
            ),
            memory(
                "Bruno's second loaf (70% hydration, 100 g starter, 10 g salt) had an open crumb.",
                "baking",
                "progress",
                said_in=(5, 10),
            ),
            fact(
                "Bruno's oven has a strong bottom element; bake one rack higher.", "baking", "equipment", said_in=(10,)
            ),
            fact("Bruno feeds his starter 1:1:1 once a day.", "baking", key="starter-1-1-1", said_in=(1,)),
            fact("Bruno's starter flour is plain white with 10–20% wholemeal rye.", "baking", said_in=(3,)),
            fact(
                "Bruno feeds his starter 1:3:3 twice a day at room temperature, discarding before each feed.",
                "baking",
                key="starter-1-3-3",
                said_in=(2,),
            ),
        ),
    ),
    DemoThread(
        slug="vegetarian-meal-prep",
        user_id="alice",
        agent_id="atlas",
        title="Vegetarian weekday lunches",
        topic="cooking",
        tags=("cooking", "meal-prep", "vegetarian"),
        exchanges=(
            (
                "I want to meal-prep vegetarian lunches for the week. I only have Sunday afternoons.",
                "Sunday batch cooking works well: two base dishes, one grain and a couple of sauces to mix and "
                "match. How many lunches, and is there a microwave at work?",
            ),
            (
                "Five lunches, and yes. I'm training for a half marathon, so I need protein.",
                "Then build around legumes, tofu, eggs and dairy, about 25–30 g of protein per lunch. Do you eat "
                "eggs and dairy?",
            ),
            (
                "Eggs yes; dairy yes, but I don't like milk itself.",
                "Easy: Greek yoghurt and feta can do a lot of work. This week: a chickpea and spinach curry, a "
                "roasted vegetable and lentil salad with feta, and a tray of baked tofu.",
            ),
            (
                "Sounds good. Shopping list?",
                "Two tins of chickpeas, 250 g red lentils, 250 g green lentils, two blocks of firm tofu, 300 g "
                "spinach, onions, garlic, ginger, coconut milk, tinned tomatoes, peppers, courgettes, 200 g feta, "
                "Greek yoghurt, brown rice and lemons.",
            ),
            (
                "How long does the curry keep?",
                "Four days in the fridge. Freeze Friday's portion on Sunday and move it to the fridge on "
                "Wednesday night. Dress the lentil salad daily rather than all at once.",
            ),
            (
                "My tofu always comes out soggy when I bake it.",
                "Press it for 20 minutes, cube it, toss with a tablespoon of cornflour, oil and soy sauce, and "
                "bake at 220°C for 25–30 minutes, turning once. Don't crowd the tray.",
            ),
            (
                "That worked! Still crispy on Tuesday.",
                "Great. A container lined with kitchen paper keeps it that way. Want a second rotation so the "
                "weeks differ?",
            ),
            (
                "Yes, something with beans maybe.",
                "Rotation B: black bean and sweet potato chilli, a quinoa salad with edamame and a peanut-lime "
                "dressing, and hard-boiled eggs for extra protein. The chilli freezes very well.",
            ),
            (
                "By the way, I'm not a fan of coriander.",
                "Noted: no coriander. I'll use parsley, mint or spring onion for freshness instead.",
            ),
            (
                "Any snack ideas for after long runs?",
                "Greek yoghurt with honey and oats, a banana with peanut butter, or a cheese toastie. After runs "
                "over 90 minutes, aim for carbohydrates plus 15–20 g of protein within an hour.",
            ),
            (
                "How do I avoid spending the whole afternoon?",
                "Start the oven things first, then the grains, then the stovetop dish; chop salad vegetables "
                "while things cook. Most people halve their prep time by the third week.",
            ),
            (
                "Can you alternate the rotations automatically?",
                "Yes: rotation A on odd weeks and B on even weeks, with the shopping list sent the evening before "
                "each prep.",
            ),
            (
                "That works for the shopping list. Thanks!",
                "You're welcome. Saved: vegetarian lunch rotations A and B on alternate weeks, no coriander, and "
                "the shopping list the morning before each prep.",
            ),
        ),
        memories=(
            fact(
                "Alice is vegetarian; she eats eggs and dairy but dislikes plain milk.",
                "diet",
                "vegetarian",
                key="meal-prep-vegetarian",
                said_in=(2,),
            ),
            preference(
                "Alice dislikes coriander; use parsley, mint or spring onion instead.", "diet", "cooking", said_in=(8,)
            ),
            preference(
                "Alice meal-preps five work lunches on Sunday afternoons; send the shopping list the evening before.",
                "cooking",
                "schedule",
                said_in=(0, 11),
            ),
            fact(
                "Alice wants about 25 g of protein in every lunch for her half-marathon build-up.",
                "meal-prep",
                "nutrition",
                said_in=(1,),
            ),
            memory(
                "Alice's lunch rotations: A (chickpea-spinach curry, lentil salad with feta, baked tofu) on odd "
                "weeks; B (black bean chilli, quinoa-edamame salad, boiled eggs) on even weeks.",
                "cooking",
                "meal-prep",
                said_in=(2, 7),
            ),
        ),
    ),
    DemoThread(
        slug="celery-worker-memory-leak",
        user_id="bruno",
        agent_id="patch",
        title="Celery workers growing to 2 GB",
        topic="debugging",
        tags=("python", "celery", "memory-leak"),
        exchanges=(
            (
                "Our Celery workers grow from 300 MB to 2 GB over a day and then get OOM-killed. Where do I start?",
                "First find out whether it's a real leak or a high-water mark. Which pool do you use, with what "
                "concurrency? And does memory grow per task or in jumps?",
            ),
            (
                "Prefork, concurrency 8. Growth is steady, roughly per task.",
                "Steady per-task growth in prefork usually means something accumulates in the child: a module-"
                "level cache or a growing global. As a stopgap, set worker_max_tasks_per_child=200 so children "
                "recycle, but let's find the cause.",
            ),
            (
                "Stopgap is in. What's the best tool to find the leak?",
                "tracemalloc, from the standard library. Start it in a worker_process_init handler, take a "
                "snapshot after 50 tasks and another after 250, then print the top 20 entries of "
                "snapshot.compare_to(old, 'lineno').",
            ),
            (
                "Top entry is pdf_report.py line 88, a dict growing with every task.",
                "Can you paste the code around line 88? A module-level dict that grows per task is usually a "
                "memoisation cache without a size limit.",
            ),
            (
                "It's `_FONT_CACHE[(font_name, size, task_id)] = load_font(font_name, size)`",
                "That's the leak: task_id is part of the key, so every task adds entries and nothing is reused. "
                "The font doesn't depend on the task; key it by (font_name, size) only.",
            ),
            (
                "Ugh. I think someone added task_id for logging.",
                "It happens. Fix the key and wrap load_font in functools.lru_cache(maxsize=64) instead of a "
                "hand-written dict, so the cache is bounded by construction.",
            ),
            (
                "Should I write a test for it?",
                "Yes: call the report function 100 times with different task ids and assert that "
                "load_font.cache_info().currsize stays at the number of fonts. Cheap, and it documents intent.",
            ),
            (
                "Deployed the fix. Memory is flat around 350 MB after six hours.",
                "That's the signature of a fixed leak. Raise max_tasks_per_child to 1000 as insurance and add an "
                "alert at 1 GB per worker so a regression shows up before an OOM kill.",
            ),
            (
                "We use Prometheus. What expression?",
                'max by (pod) (process_resident_memory_bytes{job="celery"}) > 1e9, held for 15 minutes.',
            ),
            (
                "Some tasks time out at 300 s, but the worker doesn't die.",
                "Set soft_time_limit=280 and time_limit=300: the soft limit raises SoftTimeLimitExceeded inside "
                "the task so you can log and clean up; the hard limit kills the child.",
            ),
            (
                "The PDF rendering calls a C library. Will the soft limit interrupt it?",
                "Not reliably: Python handles the signal between bytecodes, so a long C call isn't interrupted "
                "until it returns. The hard limit still works because it kills the process.",
            ),
            (
                "I'm writing the postmortem. Summary?",
                "Cause: an unbounded font cache keyed by task_id in pdf_report.py. Impact: workers reached 2 GB "
                "and were OOM-killed, delaying reports. Fix: key by (font, size), lru_cache, regression test. "
                "Follow-ups: 1 GB alert, soft and hard time limits, max_tasks_per_child=1000.",
            ),
            (
                # The demo's one pasted secret (the sensitive review queue's example), in an exchange
                # that was there before: a new one would shift the seeded times and ids of every
                # thread after it.
                "Perfect, thanks Patch. Last thing: the reports go to S3 with "
                "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE in settings.py. OK?",
                "Anytime. But not in code or in chat: rotate that key in IAM now, and give the workers an "
                "instance role (or read the key from the environment) so nothing secret sits in the repository.",
            ),
        ),
        memories=(
            fact(
                "Bruno's team runs Celery with the prefork pool at concurrency 8 and monitors it with Prometheus.",
                "celery",
                "infrastructure",
                said_in=(0,),
            ),
            memory(
                "Fixed a leak in pdf_report.py: the font cache was keyed by task_id; it is now lru_cache(maxsize=64) "
                "keyed by (font, size). Worker memory is flat at about 350 MB.",
                "celery",
                "incident",
                said_in=(7, 11),
            ),
            memory(
                "Follow-up: alert when a Celery worker exceeds 1 GB resident memory for 15 minutes.",
                "celery",
                "monitoring",
                ttl_days=30,
                said_in=(8,),
            ),
            fact(
                "Bruno's Celery workers run with worker_max_tasks_per_child=200.",
                "celery",
                key="celery-200",
                said_in=(1,),
            ),
            fact(
                "Bruno's Celery workers run with worker_max_tasks_per_child=1000, as insurance now that the leak "
                "is fixed.",
                "celery",
                key="celery-1000",
                said_in=(7,),
            ),
            memory(
                "The report queue is paused during the Celery memory incident; resume it once the fix is deployed.",
                "celery",
                "incident",
                expired=True,
                said_in=(7,),
            ),
        ),
    ),
    DemoThread(
        slug="flaky-timezone-test",
        user_id="dana",
        agent_id="patch",
        title="A test that fails only on CI, only in the evening",
        topic="debugging",
        tags=("python", "testing", "timezones"),
        exchanges=(
            (
                "CI on main is red again: a pytest test fails only on CI, and only sometimes, so merges are "
                "blocked. It checks a report's totals for yesterday.",
                "Tests about 'today' or 'yesterday' are often time-dependent. Does CI run in UTC while your laptop "
                "is in Europe/Warsaw? Does it fail at a particular time of day?",
            ),
            (
                "CI is UTC, I'm in Kraków, and it seemed to fail in the evening.",
                "That fits: around midnight the two timezones disagree about which day 'yesterday' is. If the code "
                "uses local time and the fixtures use UTC, they differ for an hour or two every day.",
            ),
            (
                "The code uses datetime.now() without a timezone.",
                "That's the root cause: naive local time. Use aware datetimes everywhere, e.g. "
                "datetime.now(tz=ZoneInfo('Europe/Warsaw')) if the report is meant to be in Warsaw time.",
            ),
            (
                "The reports are for our Polish customers, so Warsaw time.",
                "Then make the timezone explicit and pass the day in: build_daily_report(day, tz). The caller "
                "decides which day; the function no longer reads the clock.",
            ),
            (
                "How do I test it without waiting for the evening?",
                "Pass the day explicitly in tests. Where code still reads the clock, freeze time with "
                "time-machine or freezegun and add a case at 23:30 UTC.",
            ),
            (
                "Which one, time-machine or freezegun?",
                "time-machine is faster and patches at the C level, so it also catches calls from extensions; "
                "freezegun is more widespread. For a new project I'd pick time-machine.",
            ),
            (
                "Installed time-machine. The 23:30 UTC test now fails locally. Good!",
                "A test that fails deterministically is progress. Apply the timezone fix and watch it pass; keep "
                "the 23:30 case as a regression guard.",
            ),
            (
                "It passes. I also found a pandas date_range without tz in the same module.",
                "Good catch: pd.date_range(..., tz='Europe/Warsaw'), and compare aware timestamps on both sides. "
                "pandas raises when you compare aware and naive values, which helps.",
            ),
            (
                "DST! Daily totals around the end of October are off by an hour.",
                "On the day the clocks go back, a Warsaw day has 25 hours. Bucketing by fixed 24-hour windows "
                "misassigns an hour; convert to Warsaw time and group by local date instead.",
            ),
            (
                "Right, I was computing start + timedelta(days=1).",
                "That's the trap. Compute boundaries as local midnights: datetime.combine(day, time(), tzinfo=tz) "
                "and the same for the next day. zoneinfo handles the offsets.",
            ),
            (
                "Should the database store UTC?",
                "Yes: store UTC and convert at the edges, when reading input and when rendering reports.",
            ),
            (
                "I want a lint rule so naive datetimes don't come back.",
                "Enable ruff's DTZ rules (flake8-datetimez): they flag datetime.now() without tz, utcnow(), "
                "date.today() and friends.",
            ),
            (
                "DTZ is on: 14 findings, fixing them tomorrow.",
                "Nice. I'll keep the context: Warsaw-time reports, UTC in the database, time-machine in tests, "
                "DTZ in ruff. Ping me if a finding is unclear.",
            ),
        ),
        memories=(
            fact(
                "Dana's company reports are in Europe/Warsaw time, while CI runs in UTC.",
                "timezones",
                "infrastructure",
                key="dana-warsaw",
                said_in=(0,),
            ),
            preference(
                "Dana prefers time-machine over freezegun for freezing time in tests.",
                "testing",
                "python",
                said_in=(4,),
            ),
            memory(
                "Dana's flaky 'yesterday totals' test was caused by a naive datetime.now(); fixed with "
                "ZoneInfo('Europe/Warsaw') and a 23:30 UTC regression test.",
                "testing",
                "incident",
                key="dana-flaky-fix",
                said_in=(2,),
            ),
            memory(
                "Dana enabled ruff's DTZ rules; 14 findings are left to fix.", "linting", ttl_days=30, said_in=(11,)
            ),
            memory(
                "CI on main is red because of the flaky timezone test; merges are blocked until it is fixed.",
                "ci",
                "incident",
                expired=True,
                said_in=(0,),
            ),
        ),
    ),
    DemoThread(
        slug="half-marathon-plan",
        user_id="alice",
        agent_id="atlas",
        title="Half marathon in twelve weeks",
        topic="fitness",
        tags=("fitness", "running", "training-plan"),
        exchanges=(
            (
                "I signed up for the Lyon half marathon in 12 weeks. I run three times a week, about 25 km in "
                "total. Can you make a plan?",
                "Congratulations! 25 km a week is a solid base. Do you have a goal time, and which days can you run?",
            ),
            (
                "Under two hours. I can run Tuesday, Thursday, Sunday, maybe Saturday.",
                "Sub-2 means about 5:40/km. Tuesday intervals or tempo, Thursday easy, Sunday long run, an "
                "optional easy 5 km on Saturday. Build the long run from 10 to 18 km with a cutback every fourth "
                "week.",
            ),
            (
                "What pace for easy runs?",
                "Conversational: around 6:40–7:10/km for you. It should feel almost too slow; the quality comes "
                "from Tuesday.",
            ),
            (
                "And the Tuesday workouts?",
                "Rotate 6×800 m at 5:10/km with 2-minute jogs, 3×2 km at 5:30/km, and a 30-minute tempo at "
                "5:35/km, with a 2 km warm-up and cool-down.",
            ),
            (
                "My left knee aches after long runs.",
                "Worth taking seriously. Is it the outside of the knee or under the kneecap? Check your shoes' "
                "mileage, keep long runs flat and add glute bridges, side planks and step-downs twice a week.",
            ),
            (
                "Outside of the knee. The shoes have about 700 km.",
                "That's at the end of a typical shoe's life, and outside-knee pain fits IT band irritation. "
                "Replace the shoes, shorten the next long run to 12 km, and see a physio if it lasts more than a "
                "week.",
            ),
            (
                "New shoes. The physio says mild ITB: keep running, add hip strength.",
                "Good news. Follow the exercises, keep long runs flat for two weeks, then add at most 1–2 km per week.",
            ),
            (
                "Week 6 done: long run of 14 km at 6:30, felt easy.",
                "Right on track; easy long runs at 6:30 make sub-2 realistic. Next week is a cutback: 11 km long "
                "run, keep Tuesday's session.",
            ),
            (
                "How should I fuel on long runs?",
                "For runs over 75 minutes, a gel or a few chews every 30–40 minutes after the first 45. Practise "
                "with what the race serves, and check gel ingredients for gelatine.",
            ),
            (
                "Race week tips?",
                "Cut volume by about 40%, keep a short Tuesday session with a few race-pace kilometres, sleep "
                "well and try nothing new: shoes, breakfast, gels.",
            ),
            (
                "Pacing strategy for the race?",
                "Start at 5:45–5:50/km for 5 km, settle at 5:38–5:40 until 15 km, then push if you feel good. "
                "Negative splits beat banking time early.",
            ),
            (
                "I finished in 1:57:42!",
                "Fantastic: sub-2 with a margin, after managing a knee niggle mid-block. Take an easy week with "
                "only short runs.",
            ),
            (
                "What next? Maybe a 10 km personal best in spring?",
                "A great next goal. After two easy weeks we can do an 8-week block with more speed work, keeping "
                "your knee history in mind.",
            ),
        ),
        memories=(
            fact(
                "Alice ran the Lyon half marathon in 1:57:42; her goal was under two hours.",
                "running",
                "race",
                key="half-marathon-result",
                said_in=(0,),
            ),
            memory("Alice's left knee aches after long runs.", "running", "health", key="knee-aches", said_in=(4,)),
            fact(
                "Alice had mild IT band irritation in her left knee; her physio prescribed hip strengthening.",
                "running",
                "health",
                key="knee-it-band",
                said_in=(5, 6),
            ),
            preference(
                "Alice can run on Tuesday, Thursday and Sunday, and sometimes Saturday.",
                "running",
                "schedule",
                said_in=(1,),
            ),
            fact(
                "Alice's running shoes have about 700 km on them.",
                "running",
                "equipment",
                key="shoes-700-km",
                said_in=(5,),
            ),
            fact(
                "Alice replaced her running shoes at about 700 km.",
                "running",
                "equipment",
                key="shoes-new",
                said_in=(5, 6),
            ),
            memory(
                "Alice's next goal: a 10 km personal best in spring.",
                "running",
                "goal",
                ttl_days=120,
                key="goal-10k",
                said_in=(12,),
            ),
        ),
    ),
    DemoThread(
        slug="emergency-fund",
        user_id="bruno",
        agent_id="atlas",
        title="Building an emergency fund",
        topic="finance",
        tags=("finance", "savings", "budget"),
        exchanges=(
            (
                "I want to build an emergency fund. How much should I aim for?",
                "A common target is 3–6 months of essential expenses, depending on job stability and dependants. "
                "Do you know your essential monthly costs?",
            ),
            (
                "Rent £950, bills about £250, food £300, transport £120. Single, stable job.",
                "Essentials are about £1,620 a month. With a stable job and no dependants, 3–4 months is "
                "reasonable: roughly £5,000–6,500.",
            ),
            (
                "Let's say £6,000. I have £1,500 saved now.",
                "So £4,500 to go: about 11 months at £400 a month, 9 at £500. What can you comfortably set aside?",
            ),
            (
                "£450 a month, I think.",
                "Then you'll reach £6,000 in 10 months. Set up a standing order for the day after payday so it "
                "happens before you can spend it.",
            ),
            (
                "Where should I keep it? My current account pays nothing.",
                "An easy-access savings account: you need the money within a day or two. Avoid notice accounts "
                "for an emergency fund. This is general information, not personalised advice.",
            ),
            (
                "Should I use a cash ISA?",
                "If your interest could exceed your Personal Savings Allowance, a flexible easy-access cash ISA "
                "makes sense. With £6,000 you may be under it, but an ISA doesn't hurt if the rate is good.",
            ),
            (
                "I also have £800 on a credit card at 24%.",
                "Clearing that first beats saving at 4–5%. Keep a £1,000 starter buffer and use the rest of your "
                "savings plus this month's £450 to clear the card, then resume saving.",
            ),
            (
                "Makes sense. Card cleared today.",
                "Nice work, an instant 24% return. The fund is now about £1,150. Set the card to pay the full "
                "balance by direct debit from now on.",
            ),
            (
                "How do I track spending without a spreadsheet obsession?",
                "Pick three categories you care about, say eating out, subscriptions and fun money, and check "
                "them once a week in your banking app.",
            ),
            (
                "I found £38 a month of subscriptions I don't use.",
                "That's £456 a year, about a month of savings. Cancel them and add the £38 to the standing order "
                "or keep it as guilt-free fun money.",
            ),
            (
                "Adding it to savings, so £488 a month.",
                "From £1,150 you'll reach £6,000 in about 10 months. Would you like a monthly progress check-in?",
            ),
            (
                "Yes, monthly on the 2nd.",
                "Scheduled: a check-in on the 2nd of each month comparing your balance with the £6,000 target.",
            ),
            (
                "Thanks, I feel much better about money.",
                "Clearing the card and automating your savings were the two biggest steps. The rest is patience.",
            ),
        ),
        memories=(
            fact(
                "Bruno lives in the UK; his essential costs are about £1,620 a month, rent £950.",
                "finance",
                key="fund-costs",
                said_in=(1,),
            ),
            fact("Bruno saves £400 a month.", "finance", "savings", key="saves-400", said_in=(2,)),
            fact("Bruno saves £450 a month.", "finance", "savings", key="saves-450", said_in=(3,)),
            fact(
                "Bruno's emergency fund target is £6,000; he saves £488 a month by standing order the day after "
                "payday.",
                "finance",
                "savings",
                key="saves-488",
                said_in=(3, 10),
            ),
            memory(
                "Bruno cleared his £800 credit card balance (24% APR) and now pays it in full by direct debit.",
                "finance",
                "debt",
                said_in=(7,),
            ),
            preference(
                "Bruno wants a check-in on the 2nd of each month comparing his savings balance with the £6,000 target.",
                "finance",
                "reminders",
                said_in=(11,),
            ),
        ),
    ),
    DemoThread(
        slug="book-club-next-pick",
        user_id="chen",
        agent_id="atlas",
        title="Choosing the book club's next read",
        topic="books",
        tags=("book-club", "reading", "fiction"),
        exchanges=(
            (
                "I run a book club of eight teachers. We need next month's pick: discussable, under 350 pages.",
                "Fun brief. What have you read recently, and what landed well or badly? Fiction only?",
            ),
            (
                "Klara and the Sun, loved. The Goldfinch was too long; half didn't finish. Fiction preferred.",
                "Then shorter literary fiction with a strong central question: Piranesi by Susanna Clarke, The "
                "Remains of the Day by Kazuo Ishiguro (since Klara landed), or Small Things Like These by Claire "
                "Keegan.",
            ),
            (
                "Piranesi sounds intriguing. What's it about, without spoilers?",
                "A man lives alone in a vast house of endless halls and tides, keeping meticulous journals. The "
                "mystery is who he is and how he came to be there. It's about solitude, wonder and memory.",
            ),
            (
                "Memory, fitting for teachers! Is it readable for people who don't like fantasy?",
                "Yes, it reads more like a puzzle-box literary novel than genre fantasy. The journal format takes "
                "a few pages to settle into.",
            ),
            (
                "Let's do Piranesi. We meet on the last Thursday of the month.",
                "Great pick. Shall I prepare discussion questions a week before?",
            ),
            (
                "Yes, and some for people who only read half.",
                "I'll split them: five questions on the first half only, without spoilers, and five on the whole "
                "book, clearly labelled.",
            ),
            (
                "One member, Marguerite, is visually impaired. Is there an audiobook?",
                "Yes, an unabridged audiobook of about six and a half hours. Many libraries lend it digitally; "
                "holds can take weeks, so check availability early.",
            ),
            (
                "The library has two copies of the audiobook and three print copies.",
                "Then Marguerite should place a hold today. Three print copies plus members buying their own "
                "should cover eight people.",
            ),
            (
                "What food should I bring? Last time we had a theme.",
                "The narrator lives on fish and seaweed from the tides, so a sea theme fits: smoked salmon, "
                "seaweed crackers, and olive tapenade for anyone who doesn't eat fish.",
            ),
            (
                "Ha, I'm allergic to shellfish, so no prawns anyway.",
                "Noted: fish only, no crustaceans or shellfish. Salmon and seaweed are safe picks.",
            ),
            (
                "And the month after? Someone wants non-fiction for a change.",
                "Two readable options: Braiding Sweetgrass by Robin Wall Kimmerer (essays, so half is still "
                "rewarding) or The Sixth Extinction by Elizabeth Kolbert. Let the group vote?",
            ),
            (
                "I'll run a poll. Can you send me both summaries?",
                "Braiding Sweetgrass: a botanist weaves science and Indigenous knowledge into essays about plants "
                "and reciprocity. The Sixth Extinction: a journalist explains the ongoing mass extinction one "
                "species at a time.",
            ),
            (
                "Perfect. The poll is out.",
                "I'll remember: Piranesi this month for the book club, discussion questions a week before (split "
                "by half and whole book), and the non-fiction poll for next month's pick.",
            ),
        ),
        memories=(
            fact(
                "Chen runs a book club of eight teachers that meets on the last Thursday of the month.",
                "book-club",
                said_in=(0,),
            ),
            preference(
                "Chen's book club prefers fiction under 350 pages; The Goldfinch was too long for most members.",
                "book-club",
                "reading",
                key="club-fiction",
                said_in=(0,),
            ),
            memory(
                "The book club is reading Piranesi by Susanna Clarke; send discussion questions a week before, "
                "split into first-half and whole-book sets.",
                "book-club",
                "piranesi",
                said_in=(4, 5),
            ),
            fact(
                "Marguerite, a member of Chen's book club, is visually impaired and uses audiobooks.",
                "book-club",
                said_in=(6,),
            ),
            memory(
                "Next month's pick is decided by a poll: Braiding Sweetgrass or The Sixth Extinction.",
                "book-club",
                "poll",
                ttl_days=45,
                key="club-poll",
                said_in=(10, 11),
            ),
        ),
    ),
    DemoThread(
        slug="balcony-vegetable-garden",
        user_id="dana",
        agent_id="atlas",
        title="A vegetable garden on a windy balcony",
        topic="gardening",
        tags=("gardening", "balcony", "vegetables"),
        exchanges=(
            (
                "I have a south-west facing balcony in Kraków, about 4 m². What vegetables can I grow?",
                "South-west is great for afternoon sun: cherry tomatoes, chillies, salad leaves, herbs, dwarf "
                "beans and strawberries all do well in containers. Is it windy up there?",
            ),
            (
                "Fourth floor, a bit windy.",
                "Then choose compact varieties and heavier pots. Bush cherry tomatoes stay short, rosemary makes a "
                "windbreak, and anything taller than 60 cm needs a stake.",
            ),
            (
                "When can I start?",
                "The last frost in Kraków is usually mid-May. Sow tomatoes and chillies indoors in late March, "
                "salad outside from mid-April, and move tender plants out after mid-May.",
            ),
            (
                "How big should the pots be?",
                "At least 20 litres per tomato, 10 per chilli, troughs 15–20 cm deep for salad, 3–5 litres for "
                "herbs. Bigger pots dry out more slowly on a sunny balcony.",
            ),
            (
                "Watering will be a problem when I travel.",
                "Self-watering containers or a small drip kit with a timer will cover a week. For longer trips, "
                "group the pots in the shade and ask a neighbour.",
            ),
            (
                "Is there a weight limit I should worry about?",
                "Wet compost weighs about 1.5 kg per litre, so ten 20-litre pots are around 300 kg. Keep the "
                "heaviest pots by the wall, and ask the building manager if unsure.",
            ),
            (
                "Good point. What soil?",
                "Peat-free container compost with about 20% perlite for drainage, slow-release organic fertiliser "
                "at planting, then a weekly liquid tomato feed once fruit sets.",
            ),
            (
                "My tomato seedlings are tall and floppy.",
                "They're leggy from too little light. Use the brightest window or a small LED grow light for 14 "
                "hours a day, and bury the stems deeper when potting on.",
            ),
            (
                "Aphids on the chillies!",
                "Spray them off with water, then use a mild soap spray every few days. Marigolds or alyssum "
                "attract ladybirds, which help in the long run.",
            ),
            (
                "First ripe tomatoes this week!",
                "Congratulations! Pick them fully coloured and slightly soft; they taste better ripened on the plant.",
            ),
            (
                "The salad bolted in July.",
                "Heat makes lettuce bolt. In summer, move salad to the shadiest corner or grow rocket or chard, "
                "and sow again in late August for an autumn crop.",
            ),
            (
                "What should I do in October?",
                "Pull the spent tomatoes and chillies, refresh the compost, and plant garlic in a deep pot to "
                "overwinter. Move rosemary and thyme closer to the wall.",
            ),
            (
                "Garlic planted! A plan for next year?",
                "Start seeds a week earlier, add a second drip line for the chillies and try dwarf beans. I'll "
                "keep your balcony garden notes for the spring plan.",
            ),
        ),
        memories=(
            fact(
                "Dana has a windy, south-west facing 4th-floor balcony in Kraków, about 4 m².",
                "gardening",
                said_in=(0,),
            ),
            memory("Dana planted garlic in a deep pot in October to overwinter.", "gardening", "garlic", said_in=(11,)),
            memory(
                "Dana's chillies had aphids; she sprays them with mild soap and grows marigolds for the ladybirds.",
                "gardening",
                "pests",
                said_in=(8,),
            ),
            preference(
                "Dana travels in summer and wants low-maintenance watering: a drip kit with a timer.",
                "gardening",
                said_in=(4,),
            ),
            memory(
                "The seed swap at Dana's community garden is this Saturday at 10:00 in Park Jordana.",
                "gardening",
                "event",
                expired=True,
            ),
            memory(
                "Dana's balcony plan for next season: start seeds a week earlier, add a drip line for the "
                "chillies, try dwarf beans.",
                "gardening",
                "plan",
                ttl_days=200,
                said_in=(12,),
            ),
        ),
    ),
    DemoThread(
        slug="japanese-study-plan",
        user_id="chen",
        agent_id="atlas",
        title="Travel Japanese in a year",
        topic="languages",
        tags=("japanese", "language-learning", "japan"),
        exchanges=(
            (
                "I want to learn enough Japanese for my Kyoto trip next year. I'm starting from zero.",
                "A year is enough for solid travel Japanese. Start with hiragana and katakana (2–3 weeks), then "
                "core phrases and basic grammar. How much time can you give it each day?",
            ),
            (
                "About 20 minutes on weekdays, more at weekends.",
                "Plenty, if it's consistent: weekdays, 10 minutes of spaced-repetition flashcards and 10 minutes "
                "of a course; weekends, an hour of listening or a tutor.",
            ),
            (
                "Which flashcard app?",
                "Anki is free and flexible: start with a kana deck, then a core vocabulary deck. WaniKani is more "
                "guided for kanji but a bigger commitment.",
            ),
            (
                "I'll use Anki. Which course?",
                "Genki I is the classic textbook with a clear structure. As a teacher, you might like its exercises.",
            ),
            (
                "Genki it is. Kana done after three weeks!",
                "Excellent pace. Keep kana in Anki for review and start Genki chapter 1. Katakana loanwords like "
                "コーヒー (koohii) make reading menus rewarding.",
            ),
            (
                "Counters are confusing: 一つ, 一本, 一枚...",
                "For travel you need only a few: 〜つ for general things, 〜人 for people, 〜枚 for flat things like "
                "tickets, 〜本 for long things like bottles. 'Hitotsu kudasai' goes a long way.",
            ),
            (
                "Restaurant phrases, please.",
                "すみません (excuse me), 〇〇をください (… please), おすすめは何ですか (what do you recommend?), "
                "お会計お願いします (the bill, please).",
            ),
            (
                "And for my allergy?",
                "甲殻類アレルギーがあります (I have a crustacean allergy) and "
                "貝も食べられません (I can't eat shellfish either). Your printed card is the safest backup.",
            ),
            (
                "I keep forgetting vocabulary after a week.",
                "That's normal. Keep Anki at 10 new cards a day so reviews don't pile up, add example sentences, "
                "and say the cards out loud.",
            ),
            (
                "Should I get a tutor?",
                "A weekly 30-minute conversation lesson would help from around Genki chapter 5, when you can talk "
                "about yourself. Look for tutors used to beginners.",
            ),
            (
                "Booked a tutor, Yuki, Saturdays at 9:00.",
                "Great. Prepare three things to say in Japanese for each lesson and ask Yuki to correct you "
                "gently; save the corrections in Anki.",
            ),
            (
                "I'm on chapter 6 of Genki now.",
                "Ahead of schedule: you'll finish Genki I by spring, which is plenty for the trip. A beginners' "
                "podcast on your commute would train your ear.",
            ),
            (
                "Any podcast suggestion?",
                "Look for a slow, natural beginners' podcast in Japanese and listen without a transcript: ten "
                "minutes of listening fits your 20-minute weekday study.",
            ),
        ),
        memories=(
            memory("Chen plans to learn kanji with WaniKani.", "japanese", key="japanese-wanikani", said_in=(2,)),
            memory("Chen learned hiragana and katakana in three weeks.", "japanese", "progress", said_in=(4,)),
            fact(
                "Chen is learning Japanese with Anki and the Genki I textbook, now around chapter 6.",
                "japanese",
                key="japanese-anki",
                said_in=(3, 11),
            ),
            preference(
                "Chen studies Japanese about 20 minutes on weekdays and longer at weekends.", "japanese", said_in=(1,)
            ),
            memory(
                "Chen listens to a slow beginners' podcast in Japanese for ten minutes a day.",
                "japanese",
                "listening",
                said_in=(12,),
            ),
            fact("Chen has a Japanese tutor, Yuki, on Saturdays at 9:00.", "japanese", "schedule", said_in=(10,)),
        ),
    ),
    DemoThread(
        slug="hosting-station-eleven",
        user_id="dana",
        agent_id="atlas",
        title="Hosting the Station Eleven meeting",
        topic="books",
        tags=("book-club", "reading", "hosting"),
        exchanges=(
            (
                "Our English-language book club in Kraków discusses Station Eleven next Wednesday, and I'm hosting "
                "for the first time. Help?",
                "Happy to. How many people, how long is the meeting, and has everyone finished the book?",
            ),
            (
                "About ten people, two hours, most have finished. Half are non-native speakers.",
                "Keep questions concrete and open, avoid idioms, and start with an easy round: 'Which character "
                "would you travel with, and why?'",
            ),
            (
                "Good. More questions?",
                "Try: Do you agree with the Travelling Symphony's motto? Why is the story told out of order? What "
                "does the comic book mean to Kirsten and to Miranda? How does the novel treat memory?",
            ),
            (
                "Any without spoilers for the two who haven't finished?",
                "'What would you put in the Museum of Civilization?' and 'What would you miss most from today's "
                "world?' both work after the first third.",
            ),
            (
                "How do I stop one person dominating? Piotr always talks a lot.",
                "Use rounds for the first two questions so everyone gets a turn, then redirect warmly: 'Great "
                "point; I'd love to hear from someone who hasn't spoken yet.'",
            ),
            (
                "There's a TV adaptation too. Should I mention it?",
                "Briefly, at the end: the series changes a lot, which makes a good last question about what you "
                "would keep or change. Don't let it take over.",
            ),
            (
                "Snacks? It's at my flat.",
                "Things you can eat while talking: pierogi from a good local place, a cheese board and fruit. For "
                "the theme, set up a Museum of Civilization table.",
            ),
            (
                "Love the museum idea. I'll ask everyone to bring one object.",
                "Ask them to explain their choice in one sentence: that's your warm-up round.",
            ),
            (
                "What about the next book? We alternate genres.",
                "After speculative fiction, a mystery or a memoir: The Thursday Murder Club (light, clear prose) "
                "or Educated by Tara Westover (very discussable).",
            ),
            (
                "Educated would be great, I think.",
                "Good choice for discussion: family, education and memory, about 330 pages, so a month is enough.",
            ),
            (
                "Can you give me a timeline for the evening?",
                "19:00 arrivals and snacks; 19:20 object round; 19:40 main questions; 20:30 adaptation and "
                "wrap-up; 20:45 next book; 21:00 finish.",
            ),
            (
                "The meeting went great! Ten people came, and the object round was the highlight.",
                "Congratulations on a successful first hosting. The object round for the Museum of Civilization "
                "sounds like a book club tradition worth keeping.",
            ),
            (
                "We voted: Educated is next, at Ola's place.",
                "Noted: Educated by Tara Westover is the next read of your book club, hosted by Ola. I can prepare "
                "discussion questions for the group, in plain English for the non-native speakers.",
            ),
        ),
        memories=(
            fact(
                "Dana is in an English-language book club in Kraków of about ten people, half non-native speakers.",
                "book-club",
                said_in=(0, 1),
            ),
            preference("Dana's book club alternates genres from one read to the next.", "book-club", said_in=(8,)),
            preference(
                "For Dana's book club, keep discussion questions concrete, open and in plain English, without idioms.",
                "book-club",
                "hosting",
                said_in=(1,),
            ),
            memory(
                "Dana hosted the Station Eleven meeting; the 'bring an object for the Museum of Civilization' "
                "round was the highlight.",
                "book-club",
                "hosting",
                key="museum-round",
                said_in=(11,),
            ),
            memory(
                "The next book club read is Educated by Tara Westover, hosted by Ola.",
                "book-club",
                ttl_days=6,
                said_in=(12,),
            ),
            fact(
                "In Dana's book club, Piotr tends to dominate; rounds keep the discussion balanced.",
                "book-club",
                key="club-rounds",
                said_in=(4,),
            ),
            memory(
                "This week's book club meeting moved to Wednesday 19:00 at Dana's flat.",
                "book-club",
                "event",
                expired=True,
                said_in=(0,),
            ),
        ),
    ),
)

DEMO_LINKS = (
    # Supersedes: the newer memory replaces the older, which stays as history (invalid). One chain.
    DemoLink("atlas-brief", "supersedes", "atlas-100-words"),
    DemoLink("lisbon-principe-real", "supersedes", "lisbon-alfama"),
    DemoLink("kyoto-tickets", "supersedes", "kyoto-rail-pass"),
    DemoLink("starter-1-3-3", "supersedes", "starter-1-1-1"),
    DemoLink("celery-1000", "supersedes", "celery-200"),
    DemoLink("shoes-new", "supersedes", "shoes-700-km"),
    DemoLink("saves-450", "supersedes", "saves-400"),
    DemoLink("saves-488", "supersedes", "saves-450"),
    # Made by automatic (LLM) linking: the review queue asks a curator to accept or revert it.
    DemoLink("japanese-anki", "supersedes", "japanese-wanikani", by_llm=True),
    # Refines: the precise diagnosis replaces the vague complaint.
    DemoLink("knee-it-band", "refines", "knee-aches"),
    # Duplicates: the fuller memory of the meal-prep thread makes the Lisbon one redundant (the
    # LLM's automatic linking found it).
    DemoLink("meal-prep-vegetarian", "duplicates", "lisbon-vegetarian", by_llm=True),
    # Supports: evidence for another memory.
    DemoLink("lisbon-quiet", "supports", "lisbon-principe-real"),
    DemoLink("alice-sam", "supports", "lisbon-trip"),
    DemoLink("kyoto-trip", "supports", "kyoto-tickets"),
    DemoLink("half-marathon-result", "supports", "goal-10k"),
    DemoLink("dana-warsaw", "supports", "dana-flaky-fix"),
    DemoLink("fund-costs", "supports", "saves-488"),
    # Contradicts, unresolved: a poll between two non-fiction books in a club that prefers fiction.
    DemoLink("club-poll", "contradicts", "club-fiction"),
    # A custom label with its opposite.
    DemoLink("club-rounds", "inspired", "museum-round", opposite="inspired_by"),
)
"""The links between demo memories, created in this order after every memory is written."""

# What reviewers did at the dashboard the day before the demo ends, so that the curation history
# has changes to show and undo: corrections, then an agent's guidelines approved in one bulk change.
CORRECTIONS = (
    DemoCorrection(
        "moderator-1",
        "Chen likes reminders a week before any deadline.",
        "Chen likes reminders a week before any deadline, trip bookings included.",
    ),
    DemoCorrection(
        "moderator-1",
        "Dana's first language is Polish; English is fine for technical topics.",
        "Dana's first language is Polish; English is fine for technical topics and for her book club.",
    ),
)
GUIDELINES_APPROVED = ("moderator-2", "patch")
"""(reviewer, agent): the reviewer approves every guideline of the agent at once."""
