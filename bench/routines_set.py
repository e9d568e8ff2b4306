"""A labelled set for routines found offline (core/consolidate/routines.py): groups of sessions, each with the
routine a person would accept from them, or none.

Written by hand for this benchmark, in two halves written separately: DEV was used while the extractor was
written; HELDOUT was written afterwards and scored once before any change (bench/RESULTS-routines.md says
what that first score was). A case's ``routine`` is the steps as instructions, in order; ``None`` means no
candidate should be proposed. Sessions are lists of episode texts, in order.
"""

from __future__ import annotations

from typing import Any

Case = dict[str, Any]

DEV: list[Case] = [
    {
        "sessions": {
            "s1": ["I restarted nginx, then cleared the cache and checked the logs."],
            "s2": [
                "Had to restart nginx again.",
                "Cleared the cache, looked at the dashboards, and checked the error logs.",
            ],
        },
        "routine": ["restart nginx", "clear the cache", "check the logs"],
    },
    {
        "sessions": {
            "mon": [
                "First we pulled the latest changes. Then ran the migrations; finally deployed to staging."
            ],
            "thu": [
                "Pulled the latest changes from main",
                "ran the migrations again",
                "deployed to staging and told the team",
            ],
        },
        "routine": ["pull the latest changes", "run the migrations", "deploy to staging"],
    },
    {
        "sessions": {
            "a": [
                "Steps today:\n1. back up the database\n2. upgrade postgres\n3. restart the app server\n4. verify the health check"
            ],
            "b": [
                "We backed up the database before anything else.",
                "Then upgraded postgres, restarted the app server and verified the health check.",
            ],
        },
        "routine": [
            "back up the database",
            "upgrade postgres",
            "restart the app server",
            "verify the health check",
        ],
    },
    {
        "sessions": {
            "x": ["Preheated the oven, mixed the flour and butter, baked the scones for twelve minutes."],
            "y": [
                "I preheated the oven again and mixed the flour with cold butter.",
                "Baked the scones, they came out fine.",
            ],
        },
        "routine": ["preheat the oven", "mix the flour and butter", "bake the scones"],
    },
    {
        "sessions": {
            "p": [
                "Rotated the API key in the dashboard, updated the secret in the vault, redeployed the worker."
            ],
            "q": ["Rotate the API key, update the secret in the vault, then restart the worker."],
        },
        "routine": None,  # only two actions shared (rotate the key, update the secret): not a routine yet
    },
    {
        "sessions": {
            "c1": ["I went to the support group yesterday and it was amazing."],
            "c2": ["We talked about the painting she made for her mother."],
            "c3": ["He loves hiking and went camping with his kids last summer."],
        },
        "routine": None,
    },
    {
        "sessions": {
            "c1": [
                "I called my sister, then we booked a table for Friday, and I sent the invite to everyone."
            ],
            "c2": ["My brother visited on Sunday; we watched a film and cooked pasta."],
        },
        "routine": None,
    },
    {
        "sessions": {
            "o1": ["Opened the ticket, assigned it to the on-call engineer, and notified the customer."],
            "o2": [
                "Notified the customer first, then opened the ticket and assigned it to the on-call engineer."
            ],
        },
        "routine": None,  # the same three actions in another order: no routine in order of three
    },
    {
        "sessions": {
            "w1": ["Watered the tomatoes, fed the cat, emptied the dishwasher."],
            "w2": [
                "Morning chores: watered the tomatoes",
                "then fed the cat",
                "and emptied the dishwasher before work.",
            ],
            "w3": ["I watered the tomatoes and fed the cat but forgot the dishwasher."],
        },
        "routine": ["water the tomatoes", "feed the cat", "empty the dishwasher"],
    },
    {
        "sessions": {
            "r1": [
                "Tagged the release, built the docker image, pushed it to the registry, and updated the changelog."
            ],
            "r2": ["I tagged the release v2.3", "built the docker image", "pushed the image to the registry"],
        },
        "routine": ["tag the release", "build the docker image", "push it to the registry"],
    },
    {
        "sessions": {
            "m1": ["She said she will check the schedule and call me back."],
            "m2": ["She said she will check the schedule and call me back tomorrow."],
        },
        "routine": None,  # two actions repeated, not three
    },
    {
        "sessions": {
            "t1": ["Ran the unit tests, fixed the failing import, ran the linter, committed the change."],
            "t2": [
                "Ran the unit tests; they failed.",
                "Fixed the failing import.",
                "Ran the linter and committed the change.",
            ],
        },
        "routine": ["run the unit tests", "fix the failing import", "run the linter", "commit the change"],
    },
]

HELDOUT: list[Case] = [
    {
        "sessions": {
            "h1": ["Drained the node, upgraded the kubelet, uncordoned it and watched the pods come back."],
            "h2": ["We drained node-3 and upgraded the kubelet.", "After that I uncordoned the node."],
        },
        "routine": ["drain the node", "upgrade the kubelet", "uncordon the node"],
    },
    {
        "sessions": {
            "h1": ["Exported the invoices to CSV, emailed them to the accountant, archived the folder."],
            "h2": [
                "I exported this month's invoices to CSV.",
                "Emailed the invoices to the accountant and archived the folder.",
            ],
        },
        "routine": ["export the invoices to CSV", "email them to the accountant", "archive the folder"],
    },
    {
        "sessions": {
            "h1": ["Packed the lunch boxes, checked the school bags, and locked the back door."],
            "h2": [
                "Packed lunch boxes for both kids, checked their school bags, locked the back door and left."
            ],
        },
        "routine": ["pack the lunch boxes", "check the school bags", "lock the back door"],
    },
    {
        "sessions": {
            "h1": ["We discussed the roadmap and agreed the launch moves to June."],
            "h2": ["Maria was happy about the new office and the coffee machine."],
            "h3": ["The meeting ran long; nobody had the numbers."],
        },
        "routine": None,
    },
    {
        "sessions": {
            "h1": ["I ran five kilometres, then stretched, then made a smoothie."],
            "h2": ["Went for a walk with Sam and read a book in the park."],
        },
        "routine": None,
    },
    {
        "sessions": {
            "h1": ["Cloned the repo, installed the dependencies, ran the test suite."],
            "h2": [
                "Cloned the repository on the new laptop",
                "installed dependencies with pip",
                "ran the test suite to check the setup",
            ],
        },
        "routine": ["clone the repo", "install the dependencies", "run the test suite"],
    },
    {
        "sessions": {
            "h1": ["Scaled the workers to ten, flushed the queue, and monitored the latency."],
            "h2": ["Flushed the queue, then scaled the workers to ten and monitored latency."],
        },
        "routine": None,  # order differs: only two in order
    },
    {
        "sessions": {
            "h1": ["Renewed the TLS certificate, reloaded nginx, and tested the site in a browser."],
            "h2": [
                "The certificate was about to expire so I renewed the TLS certificate.",
                "Reloaded nginx.",
                "Tested the site with curl.",
            ],
            "h3": ["Renewed the TLS certificate and reloaded nginx; forgot to test."],
        },
        "routine": ["renew the TLS certificate", "reload nginx", "test the site"],
    },
    {
        "sessions": {
            "h1": ["Told Jo I would send the report, then we chatted about the weekend."],
            "h2": ["Jo asked about the report again; I said I would send it on Monday."],
        },
        "routine": None,
    },
    {
        "sessions": {
            "h1": [
                "Stopped the service, truncated the log table, vacuumed the database, started the service."
            ],
            "h2": [
                "I stopped the service",
                "truncated the log table",
                "vacuumed the database",
                "started the service again",
            ],
        },
        "routine": ["stop the service", "truncate the log table", "vacuum the database", "start the service"],
    },
    {
        "sessions": {
            "h1": ["Booked the flights, reserved the hotel near the station and shared the plan with Anna."],
            "h2": ["We talked about the trip to Rome and the museums Anna wants to see."],
        },
        "routine": None,
    },
    {
        "sessions": {
            "h1": ["Rinsed the filter, refilled the water tank, and descaled the coffee machine."],
            "h2": [
                "Rinsed the filter and refilled the water tank.",
                "Descaled the coffee machine afterwards.",
            ],
        },
        "routine": ["rinse the filter", "refill the water tank", "descale the coffee machine"],
    },
]
