"""Hand-labelled conversation turns and notes for explicit-statement extraction.

Each line is ``kind | must | text``. A positive has a kind (remember, preference, decision, usage,
attribute, personal) and ``must``: words the extracted fact has to contain to count as correct. A negative
has kind ``-``: nothing may be extracted from it (questions, hypotheticals, negations, reported speech,
quotes, cancelled plans, passing states, look-alikes). ``DEV`` was used to write the extractor; ``HELDOUT``
was written at the same time and is only scored, never tuned on.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    kind: str | None
    must: str
    text: str


DEV_TEXT = r"""
remember | St Mary's | Alice said: remember that my daughter's school is St Mary's
remember | gate code is 4471 | Please remember that the gate code is 4471.
remember | Priya | Remember that Priya is the new product owner.
remember | oat milk | Don't forget that Sam only drinks oat milk.
remember | second Tuesday | Note that the board meets on the second Tuesday of each month.
remember | shellfish | Oh and remember: my son can't eat shellfish.
remember | staging | Please note the staging database is reset every Sunday night.
remember | Kowalski | Marta: remember that my landlord is Mr Kowalski.
remember | invoices | Keep in mind that invoices go out on the 25th.
remember | 8 am | Please remember the clinic opens at 8 am on weekdays.
remember | Hannah | Don't forget my sister Hannah is vegan.
remember | main | Remember that releases are cut from the main branch only.
remember | Oslo | For future reference, the Oslo office uses a different VPN.
preference | window seats | Bob: I prefer window seats.
preference | green | Oh, my favourite colour is green!
preference | aisle | I really prefer aisle seats on long flights.
preference | jazz | I love jazz, especially Coltrane.
preference | cilantro | I hate cilantro.
preference | hiking | Caroline said, "I love hiking in the mountains"
preference | dark mode | I prefer dark mode in every editor.
preference | Dune | My favourite book is Dune.
preference | sushi | Tom: my favourite food is sushi.
preference | tea | I like green tea in the afternoon.
preference | morning | I prefer morning meetings to afternoon ones.
preference | tabs | I prefer tabs over spaces.
preference | Thai | Our favourite restaurant is the Thai place on King Street.
preference | running | I enjoy running along the river.
decision | Fridays | We decided to ship on Fridays.
decision | Postgres | We agreed on Postgres for the new service.
decision | Vercel | We're going with Vercel for hosting.
decision | two-week | The team decided to move to two-week sprints.
decision | monorepo | We've decided to keep everything in one monorepo.
decision | Rust | We settled on Rust for the parser.
decision | Kafka | We'll use Kafka for the event bus.
decision | Thursday | We agreed to hold the retro on Thursday afternoons.
decision | Lisbon | We chose Lisbon for the offsite.
decision | squash | We decided that all PRs are squash-merged.
usage | Terraform | We use Terraform for all infrastructure.
usage | Slack | We use Slack for team chat and Zoom for calls.
usage | pnpm | Note: we use pnpm for the frontend
usage | GitHub Actions | We're using GitHub Actions for CI.
usage | Sentry | We use Sentry to track errors.
usage | Notion | Our team uses Notion for docs.
usage | uv | I use uv to manage Python environments.
usage | Linear | We use Linear for issue tracking.
attribute | Joanna | my wife's name is Joanna
attribute | May | My birthday is in May.
attribute | Rex | Our dog's name is Rex.
attribute | Dr Patel | My doctor is Dr Patel.
attribute | O negative | My blood type is O negative.
attribute | Berlin | My hometown is Berlin.
attribute | Europe/Lisbon | My timezone is Europe/Lisbon.
attribute | Karen | Jake: my manager is Karen Li.
attribute | eu-west-1 | Our AWS region is eu-west-1.
attribute | June 14 | Our anniversary is June 14.
attribute | Neovim | My editor is Neovim.
attribute | Biscuit | My cat's name is Biscuit.
attribute | Python | Our main language is Python.
attribute | she/her | My pronouns are she/her.
personal | peanuts | I am allergic to peanuts.
personal | penicillin | I'm allergic to penicillin.
personal | Porto | I live in Porto.
personal | Acme | I work at Acme Corp.
personal | nurse | Dana: I work as a nurse
personal | Brooklyn | Sofia: I live in Brooklyn with two roommates.
personal | bees | I'm severely allergic to bees.
personal | Google | I work for Google on the Maps team.
personal | Leeds | Btw I live in Leeds now.
personal | hospital | I work at the children's hospital.
- | | Do you remember that trip to Rome?
- | | I remember that we laughed a lot that night.
- | | If I lived in Paris I would be happy.
- | | She said she prefers tea.
- | | We decided to use Redis, but then we scrapped it.
- | | My phone is dead.
- | | I love that!
- | | I love your new haircut.
- | | Assistant: I prefer concise answers.
- | | Maybe we'll use Kafka.
- | | We might go with Vercel.
- | | I don't like mushrooms.
- | | My point is that we need more tests.
- | | My head is killing me today.
- | | Would you prefer tea or coffee?
- | | What is your favourite movie?
- | | He told me his favourite band is Muse.
- | | My mom says I live in a pigsty.
- | | I'd like a coffee please.
- | | I would love to visit Japan someday.
- | | We were going to use Mongo but changed our mind.
- | | I used to live in Boston.
- | | We decided to go with AWS. Actually scratch that, we cancelled it.
- | | I don't work at Acme anymore.
- | | I'm not allergic to anything.
- | | My car is in the shop again.
- | | My day was great, thanks!
- | | I love it when a plan comes together.
- | | "I prefer the red one," she laughed.
- | | The sign said "remember that you are mortal".
- | | Do we use Terraform for this?
- | | Should we use Postgres?
- | | Our build is broken again.
- | | My code is failing on CI.
- | | I like how you explained that.
- | | I love seeing your pictures!
- | | I hate when that happens.
- | | I'm thinking about moving to Lisbon.
- | | Perhaps my favourite book is Dune, not sure.
- | | We never decided on a database.
- | | Remember that time we got lost in Venice?
- | | Remember to call mom.
- | | I work late on Thursdays.
- | | I live for these moments.
- | | My question is whether this scales.
- | | My guess is it's a caching issue.
- | | They decided to move to Denver.
- | | John loves hiking.
- | | We use it every day.
- | | I love this!
- | | My kids are driving me crazy.
- | | Our flight is delayed.
- | | My bad, I forgot.
- | | I hope we use Rust.
- | | We agreed on nothing in that meeting.
- | | I wonder if my doctor is in today.
- | | We decided not to ship on Fridays.
- | | I'm allergic to mornings, lol?
- | | Her favourite colour is purple.
- | | My mind is blown.
- | | My pleasure!
- | | My dog is so cute.
- | | I like it.
- | | Sure, I prefer whatever you think is best.
- | | We'll use whatever works.
- | | I work from home today.
- | | Honestly my favourite part was the ending.
- | | We used Jenkins until last year.
- | | My manager is out sick this week.
- | | Our team is growing fast.
- | | My brother thinks I work too much.
- | | Can you note that down?
- | | I love you too!
- | | I enjoyed the concert a lot.
- | | I'd prefer not to say.
remember | Wednesday | Remember that bin day is Wednesday.
preference | cold brew | Kofi: I prefer cold brew to espresso.
decision | Portuguese | We agreed to run the workshop in Portuguese.
usage | Postgres | We use Postgres for analytics.
attribute | Luna | My daughter's name is Luna.
personal | Nairobi | Amara: I live in Nairobi.
preference | board games | I love board games.
attribute | 07700 | My phone number is 07700 900123.
- | | Did you decide on Postgres in the end?
- | | I kind of like the new logo, I guess.
"""

HELDOUT_TEXT = r"""
remember | Thursdays | Remember that the cleaner comes on Thursdays.
remember | gluten | Please remember my partner is gluten intolerant.
remember | Wi-Fi | Note that the guest Wi-Fi password changes monthly.
remember | Lucas | Don't forget that Lucas starts school in September.
remember | 3 pm | Ana: please remember that my physio appointments are at 3 pm.
remember | Frankfurt | Remember that the database lives in Frankfurt.
remember | Michelle | Keep in mind that Michelle handles all vendor contracts.
remember | passport | Don't forget that my passport expires in March 2027.
remember | quarterly | Note that expenses are reimbursed quarterly.
remember | nuts | Oh, and remember that Grandpa can't have nuts.
remember | Kenji | Remember: Kenji is our contact at the agency.
remember | Ubuntu | Please note that the build machines run Ubuntu 22.04.
preference | mountains | I prefer the mountains to the beach.
preference | Italian | My favourite cuisine is Italian.
preference | podcasts | I love podcasts about history.
preference | crowds | I hate crowds.
preference | email | Raj: I prefer email over phone calls.
preference | Beatles | My all-time favourite band is the Beatles.
preference | cats | I adore cats.
preference | chess | Melanie said, "I enjoy playing chess on weekends"
preference | spicy | I like spicy food.
preference | bullet | I prefer short bullet-point summaries.
preference | autumn | My favourite season is autumn.
preference | trains | I prefer trains to planes for trips under five hours.
preference | gardening | I love gardening.
preference | Python | I prefer Python for scripting.
decision | GraphQL | We decided to drop REST in favour of GraphQL for the mobile app.
decision | Mondays | We agreed that releases happen on Mondays.
decision | Stripe | We're going with Stripe for payments.
decision | Kubernetes | The team decided to migrate to Kubernetes.
decision | Copenhagen | We chose Copenhagen for the summer retreat.
decision | TypeScript | We've decided to rewrite the frontend in TypeScript.
decision | weekly | We agreed to switch to weekly one-on-ones.
decision | SQLite | We settled on SQLite for the desktop app.
decision | Datadog | We'll use Datadog for monitoring.
decision | feature flags | We decided on feature flags for every risky change.
usage | Figma | We use Figma for all design work.
usage | 1Password | We use 1Password to share credentials.
usage | Jira | Our team uses Jira for sprint planning.
usage | Obsidian | I use Obsidian for my notes.
usage | Docker | We're using Docker Compose for local development.
usage | Grafana | We use Grafana for dashboards.
usage | Cloudflare | We use Cloudflare in front of the API.
attribute | Maria | My mother's name is Maria.
attribute | 1990 | My birthday is 12 March 1990.
attribute | Whiskers | My cat's name is Whiskers.
attribute | Dr Okafor | Our family doctor is Dr Okafor.
attribute | Denver | My hometown is Denver.
attribute | Spanish | My first language is Spanish.
attribute | Lee | Maya: my boss is Daniel Lee.
attribute | us-east-1 | Our region is us-east-1.
attribute | Zsh | My shell is Zsh.
attribute | AB positive | My blood type is AB positive.
attribute | Go | Our backend language is Go.
attribute | labrador | My dog is a black labrador.
attribute | MIT | My university was MIT.
personal | latex | I am allergic to latex.
personal | dust | I'm allergic to dust mites.
personal | Melbourne | I live in Melbourne.
personal | Spotify | I work at Spotify.
personal | teacher | Lena: I work as a teacher.
personal | Seattle | Ok so I live in Seattle.
personal | cats | I'm allergic to cats.
personal | startup | I work for a small startup in Austin.
personal | Berlin | Jon: I live in Berlin.
personal | pharmacy | I work at the pharmacy on Main Street.
- | | Do you remember that concert last year?
- | | I remember that we stayed up all night.
- | | If I had a dog I'd call him Max.
- | | He said he prefers Python.
- | | We decided to use Mongo, but then we reverted.
- | | My laptop is overheating.
- | | I love that idea!
- | | I love your dress.
- | | Bot: I like helping people.
- | | Maybe we'll use Datadog.
- | | We could go with Stripe.
- | | I don't like horror movies.
- | | My concern is the deadline.
- | | My back is sore.
- | | Would you rather live in Rome or Paris?
- | | What's your favourite season?
- | | She told me her favourite food is ramen.
- | | My dad says I work too hard.
- | | I'd love a holiday.
- | | I would prefer the blue one if it's available.
- | | We were going to move to Lisbon but it fell through.
- | | I used to work at Google.
- | | We decided on the venue. Never mind, it's cancelled.
- | | I don't live in London anymore.
- | | I'm not allergic to cats.
- | | My train is late again.
- | | My week has been hectic.
- | | I love it!
- | | "I like trains," the kid said.
- | | The card read "remember that we love you".
- | | Do we use Docker here?
- | | Should we go with GraphQL?
- | | Our tests are flaky.
- | | My internet is down.
- | | I like what you did there.
- | | I love hearing from you.
- | | I hate when it rains on weekends.
- | | I'm considering a move to Canada.
- | | Possibly my favourite film is Alien.
- | | We never agreed on the budget.
- | | Remember when we missed the ferry?
- | | Remember to buy milk.
- | | I work best in the mornings.
- | | My guess is the cache is stale.
- | | My question is about pricing.
- | | They decided to sell the house.
- | | Sarah loves painting.
- | | We use that a lot.
- | | I love this song!
- | | My kids are home sick.
- | | Our meeting ran long.
- | | My apologies for the delay.
- | | I hope we go with Stripe.
- | | I wonder whether my blood type matters.
- | | We decided not to hire this quarter.
- | | His favourite band is Oasis.
- | | My heart is full.
- | | My dog is so silly today.
- | | I like it a lot.
- | | We'll use whichever is cheaper.
- | | I work from a cafe today.
- | | Honestly my favourite part was the food.
- | | We used Heroku until 2022.
- | | My boss is on vacation.
- | | Our office is freezing.
- | | My sister thinks I live on my phone.
- | | Could you note that?
- | | I love you guys.
- | | I liked the movie.
- | | I'd rather not.
- | | You said you live in Oslo, right?
- | | Did I tell you I work at Acme?
remember | recycling | Please remember the recycling goes out on Tuesdays.
preference | window | Yuki: I prefer a window seat on trains.
decision | Berlin | We agreed on Berlin for the conference.
usage | Tailscale | We use Tailscale for remote access.
attribute | Pedro | My husband's name is Pedro.
personal | Toronto | I live in Toronto.
preference | sourdough | I love baking sourdough.
attribute | Canon | My camera is a Canon R6.
- | | Are we using Tailscale now?
- | | I sort of prefer the old layout, maybe.
"""


def _parse(text: str) -> list[Item]:
    items = []
    for line in text.strip().splitlines():
        kind, must, body = (part.strip() for part in line.split("|", 2))
        items.append(Item(None if kind == "-" else kind, must, body))
    return items


DEV = _parse(DEV_TEXT)
HELDOUT = _parse(HELDOUT_TEXT)
