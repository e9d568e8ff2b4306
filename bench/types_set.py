"""Hand-labelled memory texts for the memory-type classifier (memdeck.core.memtypes).

Each line is ``type | text``, the type one of preference, decision, fact, error, observation, event,
instruction. ``DEV`` and ``HELDOUT`` were written in one sitting before the rules; the rules were then
written with both in view, so ``HELDOUT`` is not a fair test. ``FRESH`` was written after the rules were
frozen and is only scored, never tuned on. The texts are ordinary notes an assistant or a person
would keep: both halves cover every type, with look-alikes (a question about a preference, an error that
was fixed, an instruction quoted inside an event).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    type: str
    text: str


DEV_TEXT = r"""
preference | I prefer window seats on long flights.
preference | I really like dark mode in every editor.
preference | I hate when meetings run over time.
preference | Alice prefers tea to coffee in the afternoon.
preference | My favourite cuisine is Ethiopian.
preference | I'd rather get a summary than the full transcript.
preference | I love hiking in the Dolomites.
preference | Bob doesn't like being called before 9 am.
preference | I can't stand loud open-plan offices.
preference | I like my reports as bullet points, not paragraphs.
preference | She loves Italian opera.
preference | I dislike long email threads.
decision | We decided to use PostgreSQL for the billing service.
decision | We will use pnpm instead of npm from now on.
decision | The team agreed to ship the release on Thursday.
decision | We're going with the blue logo.
decision | We chose Hetzner over AWS for the staging servers.
decision | Decision: the API stays on v2 until March.
decision | We've decided to drop support for Python 3.9.
decision | After the review we settled on weekly deploys.
decision | We'll use Terraform for all new infrastructure.
decision | The board approved moving the office to Leeds.
decision | I decided to take the Berlin job.
fact | Alice is allergic to peanuts.
fact | The Oslo office is on the fourth floor.
fact | Bob's birthday is on 12 May.
fact | Priya works at Siemens as a data engineer.
fact | The staging database runs on port 5433.
fact | Marco lives in Turin with his two dogs.
fact | The company has 140 employees.
fact | Our main repository is hosted on GitLab.
fact | Her daughter is called Ines.
fact | The invoice number format is INV-YYYY-NNNN.
fact | Sam's manager is Laura Chen.
fact | The VPN gateway address is vpn.example.org.
error | ModuleNotFoundError: No module named 'yaml' when running the exporter.
error | The nightly build failed with exit code 137.
error | Traceback (most recent call last): File "app.py", line 12, in main
error | Deploy to production failed: permission denied on /var/www.
error | The payment webhook throws a NullPointerException on empty carts.
error | Connection to the database timed out after 30 seconds.
error | npm install fails with ERESOLVE unable to resolve dependency tree.
error | The import crashed on rows with a missing date.
error | Got a 500 Internal Server Error from the search endpoint.
error | Segmentation fault when loading the large model file.
error | The cron job errored out again: disk quota exceeded.
observation | The test suite seems slower since the last upgrade.
observation | Alice tends to reply late in the evening.
observation | It looks like the cache is rarely hit on Mondays.
observation | Users usually open the export menu right after login.
observation | I noticed the logs grow by about 2 GB a day.
observation | Bob seems stressed about the launch.
observation | The dashboard appears to load faster on Firefox.
observation | Most support tickets mention the mobile app.
observation | The printer on floor three often jams.
observation | He seems to prefer short answers.
observation | Traffic usually peaks around 11 am.
event | Yesterday Alice and I had lunch at the Thai place.
event | Met with the landlord on Tuesday to sign the lease.
event | Bob flew to Lisbon last week for the conference.
event | This morning the team held the sprint retrospective.
event | We launched the beta on 3 March.
event | Last night Sam called about the contract.
event | Priya gave a talk at PyCon two weeks ago.
event | The office moved to the new building in June.
event | Today I finished the first draft of the proposal.
event | We visited my parents over the weekend.
event | Marco started his new job on Monday.
instruction | Always run the linter before committing.
instruction | Never share the staging password in chat.
instruction | Make sure to cc Laura on every invoice email.
instruction | Don't schedule meetings on Friday afternoons.
instruction | Remember to back up the database before migrations.
instruction | Use British spelling in all customer letters.
instruction | Please answer in French when Marie writes.
instruction | Do not deploy after 4 pm on a Friday.
instruction | Be sure to attach the receipt to every expense.
instruction | You should ask before deleting any branch.
instruction | Avoid using the word "synergy" in proposals.
instruction | Reply to support tickets within one business day.
"""

HELDOUT_TEXT = r"""
preference | I prefer aisle seats when the flight is short.
preference | I really love spicy food.
preference | I hate driving in the city.
preference | Laura prefers written updates over calls.
preference | My favourite band is Radiohead.
preference | I'd rather work from home on Wednesdays.
preference | I like answers that come with sources.
preference | Tom hates cold weather.
preference | I don't like sparkling water.
preference | My kids love pancakes on Sunday.
preference | I enjoy long walks after dinner.
decision | We decided to move the standup to 10 am.
decision | We will use Slack for all client communication.
decision | The committee agreed to postpone the audit.
decision | We're going with the smaller venue for the party.
decision | We chose React for the new admin panel.
decision | We've decided not to renew the Zendesk contract.
decision | We'll use feature flags for the checkout redesign.
decision | I decided to sell the old car.
decision | The team settled on two-week sprints.
decision | Management approved the new hiring plan.
decision | Going forward we will publish release notes every Monday.
fact | Tom is a vegetarian.
fact | The Berlin office opens at 8:30.
fact | Laura's phone extension is 4412.
fact | My brother lives in Montreal.
fact | The production cluster has 12 nodes.
fact | Anna works at the city library.
fact | The wifi network is called Guest-5G.
fact | Our fiscal year starts in April.
fact | His cat is named Pixel.
fact | The mailing list has about 3,000 subscribers.
fact | Kenji speaks Japanese and German.
fact | The warehouse is in Rotterdam.
error | ImportError: cannot import name 'Mapping' from 'collections'.
error | The backup script failed with "No space left on device".
error | The login page throws a TypeError when the email field is empty.
error | Build failed: missing environment variable API_KEY.
error | The app crashes on startup on Android 12.
error | Request to the payments API timed out twice this morning.
error | Docker compose up fails with port 5432 already in use.
error | Got a 403 Forbidden error when uploading to the bucket.
error | KeyError: 'user_id' in the report generator.
error | The migration errored with a duplicate key violation.
error | The sync job keeps failing on files larger than 2 GB.
observation | The new intern seems very motivated.
observation | Response times tend to spike after deployments.
observation | It looks like customers prefer the annual plan.
observation | Laura usually replies within an hour.
observation | I noticed the fridge makes a noise at night.
observation | The east meeting room is often double-booked.
observation | Sales appear to drop every August.
observation | Most questions in the forum are about installation.
observation | The cat seems to avoid the new food.
observation | The queue usually empties by midnight.
event | Yesterday we had a call with the Madrid team.
event | Anna got married last summer.
event | This afternoon I renewed my passport.
event | We shipped version 2.3 on Friday.
event | Tom had knee surgery three weeks ago.
event | Last month the company opened an office in Dublin.
event | Kenji joined the team in January.
event | On Saturday we went to the farmers market.
event | Today the server was restarted for maintenance.
event | I met Laura for coffee last Thursday.
event | The quarterly review took place on 14 October.
instruction | Always include the ticket number in the commit message.
instruction | Never email customers from a personal account.
instruction | Make sure the tests pass before merging.
instruction | Don't call Tom after 8 pm.
instruction | Remember to water the plants on Mondays.
instruction | Use the shared calendar for all holidays.
instruction | Please write the summary in plain English.
instruction | Do not store passwords in the wiki.
instruction | Be sure to lock the office when leaving last.
instruction | You must sign the NDA before the kickoff.
instruction | Avoid booking flights with more than one stop.
instruction | Keep replies under three sentences.
"""

TYPES = ("preference", "decision", "fact", "error", "observation", "event", "instruction")


def _parse(block: str) -> list[Item]:
    items = []
    for line in block.strip().splitlines():
        label, text = (part.strip() for part in line.split("|", 1))
        if label not in TYPES:
            raise ValueError(f"unknown type {label!r} in the labelled set")
        items.append(Item(label, text))
    return items


DEV = _parse(DEV_TEXT)
HELDOUT = _parse(HELDOUT_TEXT)

# Written after the rules were frozen, phrased without looking at them, and never tuned on: the rules
# above were written with both halves in view, so this is the fairer estimate.
FRESH_TEXT = r"""
preference | Honestly I'd take a quiet hotel over a central one any day.
preference | Jonas is a big fan of spreadsheets and hates slide decks.
preference | Coffee black, no sugar, is how I take it.
preference | I'm not a fan of surprise parties.
preference | My partner prefers we eat dinner early.
preference | I'd like the weekly digest to come on Monday mornings.
decision | Final call from the meeting: we go with vendor B.
decision | We're switching the newsletter to Buttondown next quarter.
decision | Legal signed off, so the contract will be renewed for two years.
decision | We opted for a remote-first policy.
decision | I've made up my mind to learn Spanish this year.
decision | The plan is to freeze the schema until the audit is over.
fact | The dentist's office is closed on Wednesdays.
fact | Rita was born in Porto.
fact | There are three parking spots reserved for visitors.
fact | Carlos manages the Lisbon warehouse.
fact | The API rate limit is 600 requests per minute.
fact | Ahmed's flat number is 14B.
error | Upload stopped halfway with "connection reset by peer".
error | The invoice PDF renders blank pages in Safari.
error | Stripe rejected the charge: card_declined.
error | pytest exits with an AttributeError in conftest.py.
error | The cluster ran out of memory during the reindex.
error | Login broke after the SSO certificate expired.
observation | Tickets filed on Fridays take longer to close.
observation | The new hire asks a lot of good questions.
observation | Rita sounds tired on the morning calls.
observation | Signups jump whenever we post on LinkedIn.
observation | The build is noticeably faster on the new runners.
observation | Carlos rarely takes holidays.
event | Rita's farewell dinner was last Friday.
event | The power went out at the office around noon today.
event | We interviewed two candidates for the designer role this week.
event | My grandmother turned ninety in April.
event | The first customer churned after the price change in May.
event | Ahmed presented the roadmap at the all-hands.
instruction | Send the weekly report to Carlos by Thursday noon.
instruction | Never merge on a red build.
instruction | If Rita asks about pricing, point her to the sales deck.
instruction | Check with legal before quoting any numbers publicly.
instruction | Please keep my calendar free on Friday afternoons.
instruction | Double-check the currency before sending invoices abroad.
"""

FRESH = _parse(FRESH_TEXT)

# A second fresh set, written on 2026-11-27 before any rule was changed again and scored on the code of that
# day once (the baseline in bench/RESULTS-types.md), then once more at the end: never tuned on, never read
# for errors while the rules changed. Everyday phrasing as people tell an assistant and as agents write
# notes: chat lines, notes about the user, tool and log lines.
FRESH2_TEXT = r"""
preference | For flights I pick the aisle, I get restless by the window.
preference | User prefers metric units in all answers.
preference | Not big on cilantro.
preference | Maya would rather get one long email than several short ones.
preference | The user likes concise replies without emojis.
preference | Green tea over coffee, every time.
preference | I'm more of a morning person, so early meetings suit me.
preference | User's preferred language for code examples is TypeScript.
preference | Given the choice, Omar picks trains over planes.
preference | Jazz is my go-to when I need to focus.
decision | After comparing quotes we went with the local printer.
decision | Agreed in today's sync: the mobile app will drop iOS 15 support.
decision | Going with Postgres 16 for the new analytics box.
decision | User decided to cancel the gym membership.
decision | We are not going to renew the office lease; everyone goes remote in March.
decision | The launch is postponed to October, per the leadership call.
decision | Chose the 14-inch laptop rather than the 16.
decision | ADR-012: adopt OpenTelemetry for tracing across services.
decision | Settled: weekly 1:1s move to Tuesdays.
decision | I'm going to stop using the shared drive and keep everything in the wiki.
fact | The user's name is Hannah and she lives in Leeds.
fact | Oskar is the product owner for the payments team.
fact | The staging URL is https://staging.example.com.
fact | User has two kids, aged 6 and 9.
fact | The repo uses Python 3.12 and Poetry.
fact | Ines is allergic to shellfish.
fact | Expense reports are due on the 5th of each month.
fact | Support hours are 9 to 5 CET, Monday to Friday.
fact | Zoe's cat is called Miso.
fact | The Madrid office has its own parking garage.
error | ERROR 2026-11-20 14:03:11 worker-3: job 8812 failed: ConnectionRefusedError: [Errno 111]
error | The CSV export comes out empty when the date filter is set.
error | Tried to book the table but the site kept showing "something went wrong".
error | Sentry alert: TypeError: cannot read properties of undefined (reading 'id') in checkout.js
error | The deploy pipeline is stuck at "waiting for runner" for over an hour.
error | Couldn't send the invoice: the SMTP server rejected the attachment as too large.
error | My laptop won't connect to the printer since the update.
error | kubectl apply returned: error: the server doesn't have a resource type "ingressroute"
error | Tests are red on main because of a flaky timeout in test_sync.
error | Payment to the supplier bounced: IBAN not valid.
observation | The user tends to ask follow-up questions about cost.
observation | Page load times look worse on mobile than on desktop.
observation | Lukas generally answers emails late at night.
observation | Most of the churned customers were on the monthly plan.
observation | Answers get vaguer when the context is very long.
observation | The 8:15 train is almost always late.
observation | The client seems happier since we switched to weekly updates.
observation | Noticed the disk fills up faster on weekends.
observation | Every time we change the pricing page, support gets more chats.
observation | Students in the evening class are more engaged than the morning group.
event | The team offsite happened in Lisbon from 4 to 6 March.
event | User ran the migration on the staging database at 10:42 this morning.
event | Nina's baby was born on Sunday.
event | We demoed the prototype to the client yesterday afternoon.
event | Dad had his cataract operation last Tuesday.
event | The conference keynote was streamed live to 2,000 people.
event | Completed the onboarding checklist with the new hire today.
event | Release 4.1 went out to all customers on the 12th.
event | Moved into the new flat at the end of August.
event | Got back from Kyoto on Monday night.
instruction | When summarising meetings, list action items first.
instruction | Don't book anything before 10 on Mondays.
instruction | Always cc the finance inbox on vendor emails.
instruction | For any SQL you write, use parameterised queries.
instruction | Respond in Spanish unless the user writes in English.
instruction | Before running migrations, take a snapshot of the database.
instruction | No emojis in customer-facing messages.
instruction | Refer billing questions to Dana.
instruction | Run `make check` before opening a PR.
instruction | Keep the tone friendly but short in replies to Omar.
"""

FRESH2 = _parse(FRESH2_TEXT)

# A third fresh set, written on 2026-11-27 before the model was consulted for types and scored once on the
# rules of that day (the baseline in bench/RESULTS-types.md), then once more at the end: never tuned on,
# never read for errors while the classifier changed. Other domains than the sets above (a clinic, a
# garden, a band, a school, a warehouse, a renovation, a sports club, personal money), in the same mix of
# chat lines, notes about the user, tool and log lines and meeting notes.
FRESH3_TEXT = r"""
preference | I'd much rather do video calls in the afternoon than first thing.
preference | User likes recipes that take under 30 minutes.
preference | Ravi prefers paper boarding passes to the app.
preference | Not a fan of podcasts longer than an hour.
preference | The user enjoys cooperative board games more than competitive ones.
preference | Spicy food is a no for me.
preference | I'd pick a paperback over an e-reader any day.
preference | Client wants status reports as a one-page PDF, nothing longer.
preference | User's favourite football team is Celtic.
preference | Quiet carriages on trains, please, whenever I travel.
decision | Outcome of the planning call: we'll move the newsletter to Buttondown next month.
decision | The school chose to hold parents' evening online this term.
decision | User has decided to sell the car and cycle to work.
decision | Vote result: the club raises the annual fee to 60 euros.
decision | Final pick for the kitchen worktop is oak, not quartz.
decision | We dropped the idea of a second warehouse; Rotterdam will handle everything.
decision | Approved by the clinic manager: appointments become 20 minutes long from January.
decision | After a long talk, Jun and I decided against getting a dog this year.
decision | The band will record the album live instead of track by track.
decision | RFC accepted: the mobile client switches to GraphQL.
fact | The clinic's front desk number is 020 7946 0321.
fact | User's partner is called Tomás and works as a nurse.
fact | The Rotterdam warehouse ships orders Monday to Saturday.
fact | Kaito speaks Japanese and Portuguese.
fact | The tenancy agreement runs until 31 July 2027.
fact | CI runs on GitHub Actions with two self-hosted runners.
fact | Grandma's flat is on the third floor with no lift.
fact | The licence key for the DAW is stored in 1Password under "Studio".
fact | The violin teacher charges 45 pounds per lesson.
fact | Ada is the goalkeeper of the Sunday league team.
error | [2026-11-25 03:12:44] ERROR backup: rsync exited with code 23 (partial transfer)
error | The thermostat app keeps logging me out every few minutes.
error | pip install hangs forever at "Resolving dependencies".
error | User reports the dishwasher shows error E24 and won't drain.
error | Our booking form sends two confirmation emails for every reservation.
error | The label printer prints every label shifted half an inch to the right.
error | Import of the December bank statement stopped halfway with "invalid date format".
error | Zoom audio cuts out for the remote students every ten minutes.
error | npm ERR! code ERESOLVE unable to resolve dependency tree
error | The video export freezes at 87% every single time.
observation | The user usually writes in short bursts late in the evening.
observation | Tomatoes on the south bed ripen about a week earlier than the north ones.
observation | Customers mostly call about delivery times right after lunch.
observation | Kai goes quiet in meetings whenever the budget comes up.
observation | Response times climb every day around 6 pm when the batch jobs start.
observation | The new intern picks things up really quickly.
observation | Seems like the dog is more anxious since the move.
observation | Patients booked on Friday afternoons miss appointments more often than others.
observation | The team ships more bugs in the week before a holiday.
observation | Prices at the Saturday market drop in the last hour.
event | Signed the lease for the studio on 3 November.
event | The kitchen fitters finished the install on Wednesday.
event | User's daughter started primary school in September.
event | 09:30 standup: Li demoed the new search page.
event | Ran the Cardiff half marathon last Sunday in 1:52.
event | The server room flooded during the storm two weeks ago.
event | Had the first session with the physio this morning.
event | Our band played its first gig at the Jazz Café in May.
event | The school inspection took place over two days last week.
event | v2.3.0 was tagged and published to PyPI at 16:05.
instruction | Use British spelling in anything you write for me.
instruction | If a patient asks about prices, send them the fee sheet.
instruction | Never schedule calls with Kaito before 8 am his time.
instruction | Put the invoice number in the subject line of every payment email.
instruction | When you draft code reviews, start with what works.
instruction | Convert all temperatures to Celsius.
instruction | Check with me before spending more than 50 euros.
instruction | In commit messages, keep the first line under 72 characters.
instruction | Remind the user to water the tomatoes on hot days.
instruction | Address the head teacher as Dr Okafor in emails.
"""

FRESH3 = _parse(FRESH3_TEXT)

# A fourth fresh set, written on 2026-11-27 after fresh3 was scored and read, before fresh3 joined the
# examples the model votes with: the honest estimate of that last step. Other domains again (a vet, a
# newsroom, a bakery, a lab, home IT, a car, insurance, volunteering, parenting), the same mix of phrasings.
FRESH4_TEXT = r"""
preference | I'd go for a window table over a booth whenever we eat out.
preference | The user likes having the weather in the morning briefing.
preference | Sunita prefers to be called Sunny.
preference | Dark roast for me, the lighter ones taste sour.
preference | Not keen on group chats for work stuff, email is fine.
preference | User enjoys long walks more than the gym.
preference | Kids' favourite breakfast is pancakes with banana.
preference | I'm happier with a printed itinerary than an app.
preference | Given a choice, Tariq always takes the early shift.
preference | Loves crime podcasts, can't stand true-crime documentaries though.
decision | Editorial meeting: we'll drop the Sunday print edition from April.
decision | The bakery will stop taking orders by phone and use the web form only.
decision | User decided to renew the car insurance with the same provider.
decision | Lab meeting outcome: all samples get stored at -80 from now on.
decision | We picked the green paint for the hallway after all.
decision | Going forward, the volunteers meet on the first Saturday of each month.
decision | I've made up my mind to take the part-time contract.
decision | Agreed with Lena that the kids get screen time only at weekends.
decision | The vet practice is moving to online booking only, decided at Monday's meeting.
decision | Final answer on the router: we keep the old one and add a mesh point.
fact | Biscuit is a six-year-old beagle with a grain allergy.
fact | The newsroom's night desk starts at 6 pm.
fact | User's car is a 2018 Skoda Octavia estate.
fact | The home insurance policy number is HX-448-2291.
fact | Pavel is the lab manager and orders all the reagents.
fact | The bakery opens at 7 and closes at 2 on Sundays.
fact | The NAS has four 8 TB drives in RAID 5.
fact | Mia's school is a ten-minute walk from the house.
fact | Our food bank serves about 300 families a week.
fact | The user's passport expires in August 2028.
error | The oven's temperature sensor reads 40 degrees too high.
error | Backup to the NAS fails every night with "disk quota exceeded".
error | The car shows an engine warning light after every cold start.
error | User says the insurance portal rejects the claim form with no message.
error | FATAL: password authentication failed for user "reporter"
error | Two volunteers got the wrong shift times in the reminder email.
error | The centrifuge stops mid-run with code E-07.
error | Half the photos didn't upload to the story draft.
error | Wi-Fi drops every time the microwave is on.
error | The dog's microchip doesn't show up in the national register.
observation | The bakery sells out of croissants by ten on Saturdays.
observation | Biscuit gets restless when it rains.
observation | Readers click far more on local stories than on national ones.
observation | User tends to reply faster on weekdays.
observation | The lab's freezer alarm goes off mostly during heatwaves.
observation | Volunteers are harder to find in August.
observation | The car uses more fuel on short trips than on the motorway.
observation | Mia seems calmer since she started swimming lessons.
observation | Claims filed on paper take about twice as long to be paid.
observation | The router reboots itself roughly once a week.
event | Biscuit had his vaccination on Thursday.
event | The paper won a regional award last night.
event | User moved the NAS to the loft on Sunday.
event | We ran the first bread-making class for beginners this weekend.
event | Pavel defended his thesis on 14 October.
event | The car passed its MOT yesterday with no advisories.
event | The food bank collected two tonnes of food at the Christmas drive.
event | Mia lost her first tooth at breakfast this morning.
event | Insurance paid out the claim for the broken window last week.
event | The editor-in-chief announced her retirement at Friday's all-hands.
instruction | Always double the quantities when I ask for a recipe for guests.
instruction | If the vet calls, put them through to Lena's mobile.
instruction | Don't mention the awards in the newsletter until they are public.
instruction | Write headlines in sentence case.
instruction | When logging samples, include the freezer shelf number.
instruction | Send volunteer reminders two days before each shift.
instruction | Never share the NAS admin password in chat.
instruction | Before booking a garage, compare at least three quotes.
instruction | Use metric measurements in every recipe.
instruction | Keep bedtime stories under ten minutes for Mia.
"""

FRESH4 = _parse(FRESH4_TEXT)
