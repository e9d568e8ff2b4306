"""A labelled set for extractive session summaries (core/consolidate/summaries.py): sessions of episodes
written by hand, each with the sentences a person would keep as its summary (``keep``: what the session was
about and what was decided; not greetings, asides or passing remarks).

DEV was written first and looked at while the scoring was chosen; HELDOUT was written in one go before the
first run and only scored (bench/RESULTS-summaries.md has its first score).
"""

from __future__ import annotations

from typing import Any

Session = dict[str, Any]

DEV: list[Session] = [
    {
        "episodes": [
            "Hi! How are you today?",
            "I need help planning my sister's birthday party next Saturday.",
            "She turns thirty and loves Italian food, so we are thinking of a pasta place.",
            "Haha yes she would like that.",
            "We picked Trattoria Roma for the party and booked a table for twelve people.",
            "I still need to order the cake from the bakery on Elm Street.",
            "Thanks, that's all for now.",
        ],
        "keep": [
            "I need help planning my sister's birthday party next Saturday.",
            "We picked Trattoria Roma for the party and booked a table for twelve people.",
            "I still need to order the cake from the bakery on Elm Street.",
        ],
    },
    {
        "episodes": [
            "The deploy to production failed again with a timeout in the database migration.",
            "I looked at the logs and the migration locks the orders table for several minutes.",
            "Coffee break, back in ten.",
            "We decided to split the migration into three smaller steps that each lock the table briefly.",
            "The first step ran fine on staging this afternoon.",
            "We will run the remaining migration steps on production tomorrow morning.",
        ],
        "keep": [
            "The deploy to production failed again with a timeout in the database migration.",
            "We decided to split the migration into three smaller steps that each lock the table briefly.",
            "We will run the remaining migration steps on production tomorrow morning.",
        ],
    },
    {
        "episodes": [
            "My knee has been hurting since the marathon last month.",
            "The physiotherapist said it is probably runner's knee and not a tear.",
            "It rained all day here, so gloomy.",
            "She gave me exercises for the knee twice a day and told me to stop running for three weeks.",
            "I can swim or cycle gently in the meantime.",
        ],
        "keep": [
            "My knee has been hurting since the marathon last month.",
            "The physiotherapist said it is probably runner's knee and not a tear.",
            "She gave me exercises for the knee twice a day and told me to stop running for three weeks.",
        ],
    },
    {
        "episodes": [
            "Let's go over the budget for the kitchen renovation.",
            "The quote from the builder came in at eighteen thousand euros for the kitchen.",
            "That is about three thousand more than the budget we had set.",
            "Did you see the match last night? Unbelievable ending.",
            "We could save on the kitchen by keeping the old tiles and doing the painting ourselves.",
            "We agreed to ask a second builder for a kitchen quote before deciding.",
        ],
        "keep": [
            "The quote from the builder came in at eighteen thousand euros for the kitchen.",
            "We could save on the kitchen by keeping the old tiles and doing the painting ourselves.",
            "We agreed to ask a second builder for a kitchen quote before deciding.",
        ],
    },
    {
        "episodes": [
            "I want to learn Spanish before the move to Valencia in the autumn.",
            "I tried an app for Spanish but kept forgetting the vocabulary.",
            "A friend recommended a Spanish tutor who teaches online in the evenings.",
            "Good morning by the way!",
            "I booked two Spanish lessons a week with the tutor, starting Monday.",
        ],
        "keep": [
            "I want to learn Spanish before the move to Valencia in the autumn.",
            "I booked two Spanish lessons a week with the tutor, starting Monday.",
        ],
    },
    {
        "episodes": [
            "The customer from Nordlicht complained that invoices arrive with the wrong VAT rate.",
            "Sorry, my internet keeps dropping today.",
            "Their invoices use the German VAT rate but they are registered in Austria.",
            "We fixed the VAT rate in the customer record and reissued the last three invoices.",
            "I sent the customer an apology with the corrected invoices.",
        ],
        "keep": [
            "The customer from Nordlicht complained that invoices arrive with the wrong VAT rate.",
            "Their invoices use the German VAT rate but they are registered in Austria.",
            "We fixed the VAT rate in the customer record and reissued the last three invoices.",
        ],
    },
]

HELDOUT: list[Session] = [
    {
        "episodes": [
            "Morning! Hope the weekend was good.",
            "The laptop battery drains in two hours even when it is idle.",
            "A background sync process was using most of the CPU on the laptop.",
            "I paused the sync and the battery now lasts about seven hours.",
            "Lol my dog just stole my sandwich.",
            "We should report the sync bug to the vendor so they fix the CPU usage.",
        ],
        "keep": [
            "The laptop battery drains in two hours even when it is idle.",
            "A background sync process was using most of the CPU on the laptop.",
            "I paused the sync and the battery now lasts about seven hours.",
        ],
    },
    {
        "episodes": [
            "We need to choose a school for Maya for next year.",
            "The school near the park has smaller classes but no music programme.",
            "The school in the centre has a strong music programme and Maya loves the violin.",
            "Traffic was terrible this morning.",
            "We are leaning towards the school in the centre because of the music.",
            "We will visit both schools on open day before we decide.",
        ],
        "keep": [
            "We need to choose a school for Maya for next year.",
            "We are leaning towards the school in the centre because of the music.",
            "We will visit both schools on open day before we decide.",
        ],
    },
    {
        "episodes": [
            "Our newsletter open rate dropped from forty percent to twenty five percent this quarter.",
            "Most of the drop came after we changed the newsletter sender address.",
            "By the way, the office plants need watering.",
            "Some providers now put the newsletter in the promotions folder.",
            "We will switch the newsletter back to the old sender address and watch the open rate.",
        ],
        "keep": [
            "Our newsletter open rate dropped from forty percent to twenty five percent this quarter.",
            "Most of the drop came after we changed the newsletter sender address.",
            "We will switch the newsletter back to the old sender address and watch the open rate.",
        ],
    },
    {
        "episodes": [
            "Grandma is coming to stay with us for two weeks in March.",
            "She can't manage stairs well, so she will sleep in the downstairs study.",
            "I need to buy a proper bed for the study before she arrives.",
            "The cat knocked over a vase again, ugh.",
            "Grandma also needs a lift to her doctor's appointment on the tenth.",
        ],
        "keep": [
            "Grandma is coming to stay with us for two weeks in March.",
            "She can't manage stairs well, so she will sleep in the downstairs study.",
            "I need to buy a proper bed for the study before she arrives.",
            "Grandma also needs a lift to her doctor's appointment on the tenth.",
        ],
    },
    {
        "episodes": [
            "The search page takes six seconds to load for large accounts.",
            "Profiling showed the search page runs one query per result to fetch the owner.",
            "Nice weather for a change.",
            "We replaced the per-result queries with a single join and the search page loads in under a second.",
            "The fix for the search page goes out in Thursday's release.",
        ],
        "keep": [
            "The search page takes six seconds to load for large accounts.",
            "Profiling showed the search page runs one query per result to fetch the owner.",
            "We replaced the per-result queries with a single join and the search page loads in under a second.",
        ],
    },
    {
        "episodes": [
            "I have been sleeping badly for a few weeks.",
            "I drink coffee until late in the evening, which probably does not help my sleep.",
            "Anyway, how is your project going?",
            "I will stop coffee after two in the afternoon and keep a sleep diary for two weeks.",
            "If my sleep does not improve I will see my doctor.",
        ],
        "keep": [
            "I have been sleeping badly for a few weeks.",
            "I will stop coffee after two in the afternoon and keep a sleep diary for two weeks.",
            "If my sleep does not improve I will see my doctor.",
        ],
    },
]
