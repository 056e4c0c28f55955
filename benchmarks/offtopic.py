"""Off-topic questions: what a user or agent might ask a store that knows nothing of the subject.

The seeded corpus (benchmarks/corpus.py) and the paraphrase set (benchmarks/paraphrase.py) hold
a fictional software team's engineering notes: services, deploys, meetings, on-call, databases.
These 50 questions are about cooking, sport, geography, history, nature, health, travel,
hobbies, and a few strings of nonsense. None of them has an answer in either store, so the right
recall for every one of them is no hit at all: benchmarks/quality.py counts the share of them
that get none (``no answer``).

The questions are worded as people ask them, function words and all ("how long", "what is the
best"), so a store's common words still appear in some of them; what they lack is any subject
the store knows.
"""

from __future__ import annotations

OFF_TOPIC: tuple[str, ...] = (
    # cooking
    "how long should I boil an egg for a runny yolk?",
    "what is a good substitute for buttermilk in pancakes?",
    "how do I make a sourdough starter from scratch?",
    "what temperature should a roast chicken reach inside?",
    "which spices go into a classic garam masala?",
    "can I freeze cooked rice and reheat it safely?",
    "recipe for a vegan chocolate cake without eggs",
    # sport
    "who won the football world cup in 1998?",
    "how many players are on a rugby union side?",
    "what is the offside rule in ice hockey?",
    "how long is a marathon in miles?",
    "which tennis player has the most grand slam titles?",
    "what does a birdie mean in golf?",
    # geography
    "what is the capital of Australia?",
    "which river flows through Budapest?",
    "how tall is Mount Kilimanjaro?",
    "what is the largest desert in Asia?",
    "which countries border Bolivia?",
    "what ocean lies between Africa and Australia?",
    # history and culture
    "when did the Roman empire fall?",
    "who painted the ceiling of the Sistine Chapel?",
    "what year did the Berlin wall come down?",
    "who wrote Pride and Prejudice?",
    "what is the plot of the opera Carmen?",
    # nature and science
    "why is the sky blue during the day?",
    "how many moons does Jupiter have?",
    "what do hedgehogs eat in the winter?",
    "how often should I water a cactus?",
    "when should tulip bulbs be planted?",
    "how do bees make honey?",
    # health
    "how much water should an adult drink a day?",
    "what are the symptoms of a sprained ankle?",
    "is it safe to go jogging with a mild cold?",
    "how many calories are in an avocado?",
    # travel, home and hobbies
    "do I need a visa to visit Japan as a tourist?",
    "what should I pack for a hiking trip in Scotland?",
    "how do I get red wine out of a carpet?",
    "what's a good name for a golden retriever puppy?",
    "how do I tune a guitar to drop D?",
    "which chords are in the key of G major?",
    "how do I knit a scarf as a beginner?",
    "when is the best season to see the northern lights in Iceland?",
    # nonsense
    "zzzqqq",
    "asdfghjkl qwertyuiop",
    "blorptastic frumious wibble",
    "xq7 vv9 zzkt",
    "lorem ipsum dolor sit amet",
    "purple monkey dishwasher",
    "gribble snorf plunk",
    "ooga booga wumpus",
)
"""Fifty questions neither benchmark store can answer (see the module docstring)."""


OFF_TOPIC_OTHER_LANGUAGES: tuple[str, ...] = (
    "如何煮一碗好吃的面条？",
    "上海的天气怎么样？",
    "谁赢得了昨天的篮球比赛？",
    "熊猫吃什么？",
    "京都でおすすめの観光地は？",
    "ラーメンの作り方を教えて",
    "한국에서 가장 높은 산은?",
    "비빔밥 만드는 법",
    "Как приготовить пельмени?",
    "Кто написал «Войну и мир»?",
    "¿Cuál es el río más largo de América?",
    "¿Cómo se hace una tortilla de patatas?",
    "Wie hoch ist die Zugspitze?",
    "Wann beginnt der Frühling?",
    "Quelle est la recette de la ratatouille ?",
    "Qui a peint la Joconde ?",
    "Qual è la capitale del Portogallo?",
    "كيف أطبخ الكسكس؟",
    "ताजमहल कहाँ है?",
    "Como fazer pão de queijo?",
)
"""Twenty off-topic questions in Chinese, Japanese, Korean, Russian, Spanish, German, French,
Italian, Arabic, Hindi and Portuguese. With an English embedding model a question in another
script lies near any text in that script, memory or not; the background's sentences in those
languages (ynm.index.background) are what lets such a question find nothing."""
