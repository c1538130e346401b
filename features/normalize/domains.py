"""Registrable employer domains of URLs and e-mail addresses (job boards, free mail and generic
sites dropped).
"""

from __future__ import annotations

import functools
import re

import pandas as pd
import tldextract

from jobdedup.features.normalize.contacts import (
    _FILE_TLDS,
    _MAY_HAVE_DOMAINS,
    _Contact,
    _contact_items,
    _find_all,
    _has_obfuscated_at,
    _map_contacts,
    _text_checks,
)
from jobdedup.features.normalize.unique import _check_series

# Job boards, aggregators and applicant-tracking systems: their domain says nothing about
# the employer, so they never count as a shared contact.
JOB_BOARD_DOMAINS: frozenset[str] = frozenset(
    """
    linkedin.com lnkd.in indeed.com indeed.co.uk indeed.nl indeed.de indeed.fr indeed.ca indeed.co.in
    indeed.at indeed.ch indeed.ie indeed.com.au indeed.co.il indeed.es indeed.it indeed.be indeed.jobs
    glassdoor.com glassdoor.co.uk glassdoor.nl glassdoor.de glassdoor.fr glassdoor.ca glassdoor.co.in
    glassdoor.at glassdoor.ch glassdoor.ie glassdoor.com.au glassdoor.be glassdoor.es glassdoor.it
    adzuna.co.uk adzuna.com adzuna.nl adzuna.de adzuna.fr adzuna.ca adzuna.in adzuna.at adzuna.com.au
    ziprecruiter.com ziprecruiter.co.uk monster.com monster.co.uk monster.de monster.fr monsterboard.nl
    monsterindia.com foundit.in careerbuilder.com dice.com simplyhired.com snagajob.com flexjobs.com
    usajobs.gov theladders.com themuse.com builtin.com wellfound.com angel.co hired.com lensa.com
    talent.com jooble.org bebee.com karkidi.com trabajo.org startup.jobs jobgether.com jobleads.com
    jobrapido.com careerjet.com careerjet.co.uk jora.com whatjobs.com recruit.net jobisjob.com
    remoteok.com remoteok.io remotive.com remotive.io weworkremotely.com remote.co dailyremote.com
    himalayas.app workingnomads.com arbeitnow.com arbeitnow.co.uk aijobs.net jobzmall.com otta.com
    joinhandshake.com jobright.ai careerpuck.com mysmartpros.com dejobs.org salary.com tealhq.com
    levels.fyi efinancialcareers.com joinrise.co clearedjobs.net builtinchicago.org builtinnyc.com
    builtinaustin.com builtinla.com builtinseattle.com builtinboston.com builtinsf.com climatetechlist.com
    localjobs.com simplify.jobs usnlx.com huzzle.app learn4good.com meet.jobs jointaro.com upwork.com
    mediabistro.com triangle-jobs.com quickrolehire.com ai-search.io theorg.com jobscore.com
    reed.co.uk totaljobs.com cv-library.co.uk cwjobs.co.uk jobsite.co.uk jobserve.com caterer.com
    catererandhotelkeeper.com careworx.co.uk planetrecruit.com jobs.ac.uk nhsjobs.com guardianjobs.co.uk
    stepstone.de stepstone.at stepstone.nl stepstone.com xing.com arbeitsagentur.de jobware.de
    kimeta.de jobs.de meinestadt.de karriere.at karriere.derstandard.at willhaben.at jobs.at ams.at
    nationalevacaturebank.nl werkzoeken.nl werk.nl intermediair.nl jobbird.com youngcapital.nl
    welcometothejungle.com apec.fr hellowork.com jobteaser.com francetravail.fr pole-emploi.fr
    naukri.com shine.com timesjobs.com instahyre.com iimjobs.com hirist.com cutshort.io apna.co
    alljobs.co.il drushim.co.il jobmaster.co.il gotfriends.co.il jobnet.co.il
    jobbank.gc.ca workopolis.com eluta.ca seek.com.au
    greenhouse.io lever.co myworkdayjobs.com myworkdaysite.com workday.com smartrecruiters.com
    workable.com ashbyhq.com jobvite.com icims.com taleo.net successfactors.com successfactors.eu
    bamboohr.com recruitee.com personio.de personio.com teamtailor.com breezy.hr jazzhr.com
    applytojob.com oraclecloud.com join.com softgarden.io softgarden.de rippling.com dayforcehcm.com
    ultipro.com paylocity.com paycomonline.net adp.com brassring.com csod.com phenompeople.com
    eightfold.ai pinpointhq.com homerun.co recruiterbox.com zohorecruit.com zohorecruit.eu
    """.split()
)
# Free e-mail providers: an address there is a contact, its domain is not the employer's.
FREE_MAIL_DOMAINS: frozenset[str] = frozenset(
    """
    gmail.com googlemail.com yahoo.com yahoo.co.uk yahoo.co.in yahoo.fr yahoo.de ymail.com hotmail.com
    hotmail.co.uk hotmail.fr hotmail.de hotmail.nl outlook.com outlook.de live.com live.nl live.co.uk
    msn.com aol.com icloud.com me.com mac.com protonmail.com proton.me gmx.de gmx.net gmx.at gmx.com
    web.de t-online.de freenet.de mail.ru yandex.ru yandex.com zoho.com rediffmail.com orange.fr
    free.fr laposte.net sfr.fr wanadoo.fr ziggo.nl kpnmail.nl planet.nl walla.co.il 012.net.il
    bezeqint.net btinternet.com sky.com qq.com 163.com
    """.split()
)
# Links found in every ad of a kind (social networks, link shorteners, EEO/government boilerplate).
GENERIC_DOMAINS: frozenset[str] = frozenset(
    """
    facebook.com fb.com twitter.com x.com instagram.com youtube.com youtu.be tiktok.com pinterest.com
    bit.ly t.co tinyurl.com goo.gl forms.gle ow.ly buff.ly google.com googleapis.com gstatic.com
    w3.org schema.org wikipedia.org github.com medium.com eeoc.gov dol.gov uscis.gov
    e-verify.gov ada.gov ofccp.gov justice.gov
    """.split()
)
_NON_EMPLOYER_DOMAINS = JOB_BOARD_DOMAINS | FREE_MAIL_DOMAINS | GENERIC_DOMAINS

# The Public Suffix List (ICANN and private sections: "co.uk", "com.au", "ac.il", "github.io",
# "blogspot.com") as bundled with tldextract. No suffix-list URLs and no cache directory: it never
# fetches over the network or writes to disk, and gives the same answer on every machine.
SUFFIX_LIST = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), include_psl_private_domains=True)
"""The offline public-suffix extractor (`tldextract.TLDExtract`) behind `registrable_domain`."""
_URL_HOST_RE = re.compile(
    r"(?:\b(?:https?|ftp)://(?:[^\s/@<>\"']*@)?|(?<![\w.@-])(?=www\.))"
    r"((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24})(?![a-z0-9-])",
    re.I,
)
_BARE_DOMAIN_RE = re.compile(
    r"^\s*((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24})\.?\s*(?:[/:?#].*)?$", re.I
)


def _url_hosts(text: str) -> list[str]:
    """The hosts of `_URL_HOST_RE.finditer(text)`, trying the regex only where a match can start.

    A match starts 3-5 characters before a "://" (ftp, http, https) or at a "www." in any case
    (only "W" lower-cases to "w", and replacing it keeps every position).
    """
    starts = _find_all(text.replace("W", "w"), "www.")
    starts += [at + shift for at in _find_all(text, "://") for shift in (-5, -4, -3)]
    hosts: list[str] = []
    end = 0
    for start in sorted(starts):
        if start >= end and (m := _URL_HOST_RE.match(text, start)):
            hosts.append(m.group(1))
            end = m.end()
    return hosts


def registrable_domain(host: str) -> str | None:
    """The registrable domain of a host name by the Public Suffix List: the public suffix and one
    label more ("careers.acme.co.uk" -> "acme.co.uk"); None for a bare suffix, an unknown top-level
    domain or a file name ("logo.png").

    Example:
        >>> [registrable_domain(h) for h in ("jobs.tau.ac.il", "acme.github.io", "a.b.zz")]
        ['tau.ac.il', 'acme.github.io', None]
    """
    host = host.lower().strip(".")
    if "." not in host or host.rsplit(".", 1)[1] in _FILE_TLDS:
        return None
    return SUFFIX_LIST(host).top_domain_under_public_suffix or None


def _is_non_employer(domain: str) -> bool:
    labels = domain.split(".")
    return any(".".join(labels[i:]) in _NON_EMPLOYER_DOMAINS for i in range(len(labels) - 1))


@functools.lru_cache(maxsize=1 << 16)
def _employer_domain(host: str) -> str | None:
    """The registrable domain of `host`; None for job boards, free mail and generic sites.

    Cached: the same few thousand hosts recur in every batch of ads.
    """
    dom = registrable_domain(host)
    return dom if dom and not _is_non_employer(host.lower()) and not _is_non_employer(dom) else None


def _domains(contact: _Contact) -> tuple[str, ...] | None:
    text = contact.raw
    if (  # cheap pre-check: no e-mail, URL or "www." anywhere
        "@" not in text
        and "://" not in text
        and "www." not in text.replace("W", "w")  # = text.lower(): only "W" lower-cases to "w"
        and not _has_obfuscated_at(text)
        and not _BARE_DOMAIN_RE.match(text)
    ):
        return None
    text = contact.clean
    hosts = _url_hosts(text) + [e.rsplit("@", 1)[1] for e in contact.emails]
    bare = _BARE_DOMAIN_RE.match(text)  # a contact field holding just "acme.com"
    if bare and "@" not in text:
        hosts.append(bare.group(1))
    return tuple(sorted({dom for host in hosts if (dom := _employer_domain(host))})) or None


def extract_domains(s: pd.Series) -> pd.Series:
    """Registrable employer domains from URLs and e-mail addresses in free text.

    "https://careers.acme.co.uk/job/1" and "jobs@acme.co.uk" both give "acme.co.uk" (the public
    suffix by the Public Suffix List, see `registrable_domain`; a host under no known suffix gives
    none). Domains in `JOB_BOARD_DOMAINS`, `FREE_MAIL_DOMAINS` and `GENERIC_DOMAINS` (and their subdomains) are
    dropped, so a board's URL never counts as the employer's contact.

    Returns:
        object Series of sorted tuples of domains; NA where there are none.

    Example:
        >>> extract_domains(pd.Series(["https://careers.acme.co.uk/job/1",
        ...     "https://de.indeed.com/viewjob?jk=1", "Apply: jobs@acme.de or www.acme.com"])).tolist()
        [('acme.co.uk',), <NA>, ('acme.com', 'acme.de')]
    """
    return _map_contacts(_check_series(s, "extract_domains"), [_domains], _MAY_HAVE_DOMAINS)[0]


def _url_domains(url: str | None) -> tuple[str, ...] | None:
    """`extract_domains` of one plain value (None where missing)."""
    return _contact_items(url, _text_checks(url, _MAY_HAVE_DOMAINS), [_domains], None)[0]
