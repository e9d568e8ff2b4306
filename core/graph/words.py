"""Word lists and verb patterns for the entity and relation extractor (``extract.py``).

General English only: function words, common sentence openers, name suffixes and verb phrases. Nothing
here names a person, place or topic from any data set; a list that grows to fit one is a list that lies.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that start sentences without naming anything: a capitalised word at the start of a sentence is a
# name only when it is not one of these (compared casefolded).
COMMON = words(
    """
a about above after afterwards again against ago all almost also although always am among an and another
any anyone anything anyway anyways anywhere are around as at away back be because been before being
below besides between both but by can cannot could did do does doing done down during each either else
even ever every everyone everything everywhere few for from further had has have having he her here hers
herself him himself his how however i if in into is it its itself just last least less let like lots
many may maybe me meanwhile might mine more most much must my myself neither never next no nobody none
nor not nothing now of off often on once one only or other others otherwise our ours ourselves out over
own perhaps please quite rather really same several she should since so some somebody someone something
sometimes somewhere soon still such than that the their theirs them themselves then there therefore
these they this those though through thus till to today together tomorrow tonight too toward towards
under unless until up upon us very via was we well were what whatever when whenever where wherever
whether which while who whoever whole whom whose why will with within without would yes yet you your
yours yourself yourselves yesterday tho also though already instead later earlier recently finally
actually honestly basically definitely probably hopefully luckily sadly unfortunately fortunately
apparently seriously anyway absolutely certainly clearly obviously surely totally literally suddenly
currently usually normally generally first second third firstly lastly overall otherwise hi hello hey
hiya merry yo oh ah ahh aw aww ooh wow whoa yeah yep yup nope nah ok okay sure cool great nice awesome amazing
lovely wonderful fantastic perfect thanks thank cheers congrats congratulations sorry oops ugh hmm haha
hahaha lol lmao omg wtf btw fyi imo tbh good bad glad happy sad welcome dear add ask book bring buy call
can't cancel change check choose clean close come compare confirm consider continue create delete
describe did didn't do don't doesn't draft email enjoy explain find finish fix follow forget get give go
grab have help hold imagine include keep know learn leave let's list listen look make mark meet move
need note open order pay pick plan play print put read remember remind reply report reschedule review
run save say schedule search see sell send set share show sign skip sort start stop summarise summarize
take talk tell think try turn update use wait walk want watch write upgrade install download restart
deploy reinstall configure enable disable i'm i've i'll i'd it's that's there's here's what's who's
let's we're we've we'll they're they've you're you've isn't aren't wasn't weren't won't wouldn't
couldn't shouldn't haven't hasn't note reminder update todo important warning tip fact info question
answer idea task goal user assistant agent today's tomorrow's yesterday's
join invite text message contact reach attend drop prepare organise organize arrange pack clear
went got had made saw tried watched visited finished started took came left bought heard found thought
told asked called moved spent played wanted decided loved liked learned learnt joined booked ordered
baked cooked painted signed won lost ran walked drove flew stayed picked sent shared posted
long short pretty quite super much many lots little big small huge tiny whole full half true false
right wrong exactly indeed absolutely best better worse worst new old young same different next last
early late fine alright fun funny crazy weird strange interesting hard easy busy tired excited proud
lucky thankful grateful sounds seems looks feels felt sounded seemed looked hope hoping wish guess bet
believe agreed agree love loved hate hated miss missed enjoyed sorry good-bye goodbye bye night morning
evening afternoon tonight's anyhow besides plus also speaking talking guess nothing everything
definitely hopefully yours everyone's somebody's life work home school family friends kids mom dad
credentials details notes logs settings access passwords keys tokens backups errors tests docs invoices
results metrics budget deadline costs prices payments feedback minutes agenda summary status progress
onboarding deployment release migration incident outage bug bugs issue issues ticket tickets
"""
)

# Honorifics: a name starting with one is a person.
HONORIFICS = words(
    """
mr mrs ms miss mx dr prof professor sir dame lord lady aunt auntie uncle grandma grandpa granny nana st
saint father sister brother rev captain capt coach officer judge
"""
)

ORG_SUFFIXES = words(
    """
inc inc. ltd ltd. llc plc corp corp. corporation company co co. group labs lab laboratories university
college school academy institute institution club foundation bank society association collective agency
partners studio studios records hospital clinic museum gallery library council ministry department
committee fc union league federation trust network press media systems technologies solutions ventures
orchestra philharmonic choir ensemble quartet theatre theater opera capital consulting holdings industries airlines airways traders motors foods games software
electronics insurance logistics pictures films publishing robotics bakery cafe café restaurant gmbh ag sa bv
"""
)
ORG_PREFIXES = words("university bank institute museum studio club department college school")

PLACE_SUFFIXES = words(
    """
street road rd avenue ave lane boulevard blvd square park lake river mountain mountains mount hill hills
beach bay island islands valley bridge airport station centre center tower castle cathedral palace
market coast forest falls desert sea ocean gardens garden province county state city town village
district peninsula canyon harbour harbor heights alps plaza way
"""
)
PLACE_PREFIXES = words("lake mount mt rua via calle rue avenida piazza plaza cape port isle")

# Languages and nationalities are names of something, but not of a person or place.
LANGUAGES = words(
    """
english french german dutch greek thai italian russian arabic hindi korean latin spanish portuguese
japanese chinese mandarin cantonese polish swedish norwegian danish finnish turkish hebrew persian urdu
bengali swahili vietnamese indonesian ukrainian czech hungarian romanian irish welsh scottish american
british canadian australian mexican brazilian indian african european asian christian muslim jewish
buddhist hindu catholic
"""
)

# role word -> canonical role ("mum" -> "mother"); "best_friend" stands for "best friend".
_ROLE_TEXT = """
sister brother mother mom:mother mum:mother father dad:father son daughter wife husband partner spouse
fiancé fiancée:fiancé fiance:fiancé fiancee:fiancé girlfriend boyfriend friend best_friend:friend cousin
aunt uncle niece nephew grandmother grandma:grandmother grandfather grandpa:grandfather grandson
granddaughter boss:manager manager colleague coworker:colleague co-worker:colleague mentor mentee
teacher student neighbour neighbor:neighbour roommate flatmate:roommate classmate teammate ceo cto cfo
coo assistant secretary doctor therapist dentist lawyer accountant trainer coach tutor
landlord landlady babysitter nanny supervisor client patient founder co-founder:founder cofounder:founder owner director head chair president chairman:chair
chairwoman:chair
"""
ROLES = {
    key.replace("_", " "): (value or key)
    for key, _, value in (item.partition(":") for item in _ROLE_TEXT.split())
}
# Roles held in an organisation rather than towards a person.
ORG_ROLES = words("ceo cto cfo coo founder owner director head chair president")

_AUX_WORDS = (
    "has|have|had|is|are|was|were|am|be|been|being|will|would|does|do|did|can|could|should|might|may|must"
    "|ca|wo|'s|'m|'re|'ve|'d|'ll"
)
_ADVERBS = (
    "just|also|still|now|finally|recently|really|actually|already|currently|officially|always|often|usually"
    "|sometimes|mostly|only|even|then|later|soon|happily|originally|once|first|since|both|all|definitely"
    "|probably|absolutely|totally|secretly|eventually|briefly|regularly|occasionally|mainly|again|ever"
    "|previously|formerly|[a-z]+ly"
)
_NEGATIONS = r"not|n't|never|no longer|no more"
# Between a subject and its verb: auxiliaries, adverbs, negation, "used to", "going to".
AUX = (
    rf"(?:(?:(?:{_AUX_WORDS})(?:n't)?|{_NEGATIONS}|cannot|{_ADVERBS}|used to|going to|gonna|about to"
    r"|planning to|plans to|plan to|wants? to|hopes? to|trying to|tried to|decided to|got to|get to)\s+)*"
)
NEGATION = rf"\b(?:{_NEGATIONS}|cannot)\b|n't\b"
COPULA = r"\b(?:is|are|was|were|am|be|been|being)\b|'(?:s|m|re)\b"
DET = (
    r"(?:\s+(?:the|a|an|his|her|their|my|our|its|your|some|this|that))?"
    r"(?:\s+(?:new|old|brand new|own|first|latest|favourite|favorite|little|big|small|local|famous))?"
)
_LY = r"(?:\s+\w+ly)?"
_AS = r"(?:\s+as\s+(?:an?\s+)?[\w-]+(?:\s+[\w-]+)?)?"

# (verb phrase regex, canonical predicate, object kind it implies or "", object kind it requires or "").
# A verb that is a state is written in the present ("works at"), an event in the past ("visited").
VERBS: tuple[tuple[str, str, str, str], ...] = (
    (rf"(?:work|works|worked|working){_LY}{_AS}\s+(?:at|for|with)", "works at", "organisation", ""),
    (r"(?:employed|hired)\s+(?:at|by)", "works at", "organisation", ""),
    (
        r"(?:manages|managed|leads|led|runs|ran|heads|headed|manage|lead|run)\s+(?:the|a|an)\s+(?:[\w-]+\s+){0,3}"
        r"(?:team|group|department|lab|division|office|unit)\s+(?:at|of|for)",
        "works at",
        "organisation",
        "",
    ),
    (rf"(?:work|works|worked|working){_LY}{_AS}\s+in", "works in", "place", ""),
    (
        r"(?:live|lives|lived|living|reside|resides|resided|residing|grew up|grow up|grows up|growing up"
        r"|raised|based|settled)\s+in",
        "lives in",
        "place",
        "",
    ),
    (
        r"(?:move|moves|moved|moving|relocate|relocates|relocated|relocating)(?:\s+back)?\s+to",
        "moved to",
        "place",
        "",
    ),
    (r"(?:visit|visits|visited|visiting)", "visited", "place", ""),
    (
        r"(?:go|goes|went|going|gone|been|travel|travels|travelled|traveled|travelling|traveling|fly|flies"
        r"|flew|flying|flown|drive|drives|drove|driving|head|heads|headed|heading|trip)(?:\s+back)?\s+to",
        "visited",
        "place",
        "",
    ),
    (r"(?:comes?|came|hails?)\s+from", "from", "place", ""),
    (
        r"(?:moved|emigrated|immigrated|relocated|came)(?:\s+(?:here|over|back|out))?\s+from",
        "from",
        "place",
        "",
    ),
    (
        r"(?:volunteer|volunteers|volunteered|volunteering)\s+(?:at|for|with)",
        "volunteers at",
        "organisation",
        "",
    ),
    (r"from", "from", "place", "copula"),
    (r"born\s+in", "born in", "place", ""),
    (r"(?:got\s+|get\s+|getting\s+)?(?:married|engaged)\s+to", "married to", "person", ""),
    (r"(?:marry|marries|married|marrying|wed|wedded)", "married to", "person", ""),
    (r"(?:met|meet|meets|meeting)(?:\s+up)?(?:\s+with)?", "met", "person", ""),
    (r"(?:know|knows|knew|known)", "knows", "person", ""),
    (r"(?:join|joins|joined|joining)\s+(?:us\s+)?from", "left", "organisation", ""),
    (r"(?:join|joins|joined|joining)", "joined", "organisation", ""),
    (
        r"(?:start|starts|started|starting|began|begins|begin)(?:\s+(?:a\s+)?(?:new\s+)?(?:job|role|position"
        r"|work|working|an internship|a residency))?\s+(?:at|with)",
        "joined",
        "organisation",
        "",
    ),
    (r"(?:left|leave|leaves|leaving|quit|quits|quitting)", "left", "organisation", ""),
    (r"(?:founded|co-?founded|set up|launched)", "founded", "organisation", ""),
    (r"(?:acquired|acquires|acquire|bought out)", "acquired", "organisation", ""),
    (r"(?:study|studies|studied|studying)(?:\s+[\w-]+)?\s+at", "studies at", "organisation", ""),
    (r"(?:teach|teaches|taught|teaching)(?:\s+[\w-]+)?\s+at", "teaches at", "organisation", ""),
    (r"(?:graduated|graduates|graduate)\s+from", "graduated from", "organisation", ""),
    (r"(?:report|reports|reported|reporting)\s+to", "reports to", "person", ""),
    (r"(?:manage|manages|managed|managing|supervise|supervises|supervised)", "manages", "", ""),
    (
        r"(?:use|uses|used|using|switched\s+to|switch\s+to|migrated\s+to|runs\s+on|run\s+on|relies\s+on"
        r"|rely\s+on)",
        "uses",
        "product",
        "",
    ),
    (r"(?:own|owns|owned)", "owns", "product", ""),
    (r"(?:buy|buys|bought|buying|purchased|purchase)", "bought", "product", ""),
    (r"(?:sell|sells|sold|selling)", "sold", "product", ""),
    (r"(?:read|reads|reading|reread|re-read)", "read", "title", ""),
    (r"(?:finished|finish|finishing)(?:\s+reading)?", "read", "title", "title"),
    (r"(?:watch|watches|watched|watching|saw|seen|rewatched)", "watched", "title", "title"),
    (r"(?:write|writes|wrote|written|writing|authored|published)", "wrote", "title", "title"),
    (r"(?:like|likes|liked|love|loves|loved|enjoy|enjoys|enjoyed|adore|adores|adored)", "likes", "", ""),
    (r"(?:an?\s+)?(?:big\s+|huge\s+|great\s+|massive\s+)?fan\s+of", "likes", "", ""),
    (r"(?:supports?|supported|supporting|roots?\s+for|rooting\s+for|prefers?|preferred)", "likes", "", ""),
    (r"(?:hate|hates|hated|dislike|dislikes|disliked|can't\s+stand)", "dislikes", "", ""),
    (r"(?:play|plays|played|playing)(?:\s+[\w-]+)?\s+(?:for|with)", "plays", "organisation", ""),
    (r"(?:attend|attends|attended|attending)(?:\s+[\w-]+){0,2}(?:\s+at)?", "attends", "organisation", ""),
    (r"(?:an?\s+)?members?\s+of|(?:belongs|belonged|belong)\s+to", "member of", "organisation", ""),
    (
        r"(?:the\s+|an?\s+)?(?:[\w-]+\s+){0,2}(?:head|director|manager|lead|vp|chief|engineer|designer"
        r"|developer|analyst|intern|doctor|nurse|teacher|researcher|scientist|consultant|chef|lawyer|accountant"
        r"|professor|lecturer|volunteer|pharmacist|architect|writer|editor|producer|officer|specialist"
        r"|administrator|coordinator|barista|recruiter|programmer|technician|librarian)"
        r"\s+(?:of\s+[\w-]+(?:\s+[\w-]+)?\s+)?at",
        "works at",
        "organisation",
        "copula",
    ),
)

# Words before a name that say what kind of name follows.
PLACE_PREPS = words("in near around across through into towards toward outside inside from")
MOVE_VERBS = words(
    """
moved move moving moves went go going goes gone flew fly flying flies travelled traveled travel
travelling traveling trip drove drive driving heading headed head back return returned returning
relocated relocate relocating been came come commute commuting trips ticket tickets flight flights train
"""
)
SWITCH_VERBS = words("switched switching switch migrated migrating migrate upgraded downgraded ported")
PRODUCT_CUES = words(
    """
use uses used using installed install installing upgraded upgrade upgrading downgraded runs run running
switched migrated deployed deploy built bought buy buying ordered drive drives drove driving on
"""
)
NAME_CUES = words("named called")
# "the Android app": a name followed by one of these names a product.
PRODUCT_NOUNS = words(
    "app apps account phone laptop tablet watch console subscription api sdk server cluster library framework "
    "plugin extension release build headphones earbuds platform service system tool dashboard website "
    "portal repo repository pipeline database bot chatbot engine"
)
# "the Atlas project": a name followed by one of these names an undertaking, neither a person nor a product.
PROJECT_NOUNS = words("project projects initiative programme program workstream campaign rollout migration")
# A recurring meeting or ritual named like a proper noun ("Standup", "Sprint Planning", "the All-Hands"):
# neither a person nor an organisation. A name ending in one of MEETINGS, or one of MEETING_NAMES.
MEETINGS = words(
    "standup standups stand-up stand-ups retro retros retrospective retrospectives all-hands kickoff kick-off "
    "offsite off-site sync syncs huddle check-in one-on-one 1:1 planning grooming refinement"
)
MEETING_NAMES = frozenset(("town hall", "all hands", "demo day", "sprint review", "sprint demo"))
PET_NOUNS = words("dog cat puppy kitten pet horse pony parrot rabbit bunny hamster tortoise turtle")
# Holidays are dates.
HOLIDAYS = (
    "Christmas|Christmas Eve|Christmas Day|Easter|Thanksgiving|Halloween|New Year's Eve|New Year's Day"
    "|New Year|Lunar New Year|Diwali|Eid|Hanukkah|Ramadan|Passover|Boxing Day|Valentine's Day|Mother's Day"
    "|Father's Day|Independence Day|Labor Day|Labour Day"
)
# "a bakery called X" names an organisation; "a dog named X" names something else.
ORG_NOUNS = words(
    "company startup firm business shop store bakery cafe café restaurant bar pub band team club school "
    "agency studio brand label charity"
)
PERSON_NOUNS = frozenset(ROLES) | words("baby kid child boy girl")

# --- the words around a guessed name (extract.name_contexts) ---

# A name right after one of these is a modifier or a thing, not a person ("the Leeds office", "our Jira
# board"); "that", "this" and "her" are left out, being also a conjunction or a pronoun ("the race that Ana
# won", "told her Ana called").
NOT_PERSON_AFTER = words("the a an our my your their his its every each")
# Verbs whose subject is a person or an organisation, never a place ("Ana flew to Rome"). Not the verbs a
# place is also the subject of ("Lisbon works for me", "the city went quiet", "Rome comes first", "Paris felt
# empty").
AGENT_VERBS = words(
    """
said says thinks thought wants wanted asked asks told tells knows knew believes believed hopes hoped wrote
writes flew flies drove drives met meets married visited visits studied studies lives lived arrived arrives
loves loved likes liked hates hated prefers preferred recommended recommends sent sends called calls texted
emailed replied replies laughed smiled cried agreed promised suggested forgot remembered learned learnt
learns speaks spoke swears swore
"""
)
# What comes "from" a person or an organisation, not a place ("feedback from Hiro", "an email from Aviva";
# "a postcard from Rome" can be either, so it is not here).
FROM_SENDER = words(
    """
feedback message messages email emails mail note notes text texts call calls reply replies request requests
invite invitation invitations approval approvals voicemail comment comments answer answers response
responses review reviews complaint complaints quote quotes offer offers
"""
)
# Verbs whose object is a person or an organisation, never a place ("asked Ana to join").
ADDRESS_VERBS = words(
    """
ask asked asking tell told telling remind reminded ping pinged thank thanked thanking email emailed text
texted message messaged invite invited meet met
"""
)
