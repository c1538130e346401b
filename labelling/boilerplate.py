"""Pool of text blocks that job sites and employers add around an ad, written for this project.

Kinds: "eeo" (equal-opportunity statements), "blurb" (company introductions, `{company}` filled in),
"benefits", "footer" (a site's or agency's boilerplate, `{company}`, `{agency}`, `{site}`, `{ref}` filled
in) and "nav" (page chrome scraped with the ad). Each entry is (language, kind, countries, text) where countries ("US CA", "" = any) limits where
a block fits; paragraphs are
separated by blank lines and bullet items start with "- ".
"""

from __future__ import annotations

POOL: list[tuple[str, str, str, str]] = [
    (
        "en",
        "eeo",
        "US CA",
        (
            "{company} is an equal opportunity employer. All qualified applicants will receive "
            "consideration for employment without regard to race, color, religion, sex, sexual orientation, gender "
            "identity, national origin, disability, or protected veteran status, or any other characteristic "
            "protected by applicable law."
        ),
    ),
    (
        "en",
        "eeo",
        "GB",
        (
            "We are an equal opportunities employer and welcome applications from all suitably qualified "
            "persons regardless of their race, sex, disability, religion/belief, sexual orientation or age. We are a "
            "Disability Confident employer and will offer an interview to disabled applicants who meet the minimum "
            "criteria for the role."
        ),
    ),
    (
        "en",
        "eeo",
        "CA",
        (
            "{company} is committed to providing accommodations for people with disabilities throughout "
            "the recruitment process in accordance with the Accessibility for Ontarians with Disabilities Act (AODA) "
            "and the Ontario Human Rights Code. If you require an accommodation, please let us know and we will work "
            "with you to meet your needs."
        ),
    ),
    (
        "en",
        "eeo",
        "",
        (
            "Diversity, equity and inclusion are at the heart of everything we do. We believe that a "
            "diverse workforce makes us stronger, and we encourage applications from people of all backgrounds, "
            "including women, people of colour, LGBTQ+ people, veterans and people with disabilities. Even if you "
            "do not meet every single requirement, we would still love to hear from you."
        ),
    ),
    (
        "en",
        "eeo",
        "US",
        (
            "Pay Transparency Nondiscrimination Provision: {company} will not discharge or in any other "
            "manner discriminate against employees or applicants because they have inquired about, discussed, or "
            "disclosed their own pay or the pay of another employee or applicant. This company participates in "
            "E-Verify and will provide the federal government with your Form I-9 information to confirm that you "
            "are authorized to work in the U.S."
        ),
    ),
    (
        "en",
        "blurb",
        "",
        (
            "About {company}\n\n{company} is a fast-growing, people-first organisation with offices "
            "across Europe and North America. For more than fifteen years we have helped our clients solve complex "
            "problems with smart technology and dedicated people, and we are proud to have been recognised as a "
            "Great Place to Work for three years running."
        ),
    ),
    (
        "en",
        "blurb",
        "",
        (
            "Who we are\n\nAt {company}, our mission is simple: to make a real difference for our "
            "customers and our communities. We are a team of curious, driven and friendly people who value "
            "ownership, collaboration and continuous learning, and we invest heavily in the growth of every "
            "colleague."
        ),
    ),
    (
        "en",
        "blurb",
        "",
        (
            "{company} is one of the leading employers in its sector, operating from a modern head "
            "office with a strong regional network. Our culture is built on trust, integrity and respect, and we "
            "offer a supportive environment where you can build a long-term career."
        ),
    ),
    (
        "en",
        "benefits",
        "GB",
        (
            "What we offer\n\n- Competitive salary and annual performance bonus\n- 25 days annual "
            "leave plus bank holidays\n- Hybrid working and flexible hours\n- Contributory pension scheme\n- Private "
            "medical insurance and an employee assistance programme\n- Learning and development budget"
        ),
    ),
    (
        "en",
        "benefits",
        "US",
        (
            "Benefits:\n\n- Health, dental and vision insurance from day one\n- 401(k) with "
            "company match\n- Paid time off and paid holidays\n- Parental leave\n- Tuition reimbursement\n- Employee "
            "discount program"
        ),
    ),
    (
        "en",
        "benefits",
        "CA",
        (
            "Job Type: Full-time, Permanent\n\nBenefits:\n\n- Dental care\n- Extended health care\n"
            "- Paid time off\n- RRSP match\n\nSchedule:\n\n- Monday to Friday\n\nWork Location: Hybrid remote"
        ),
    ),
    (
        "en",
        "benefits",
        "",
        (
            "Why join us?\n\n- Competitive compensation package and annual bonus\n- Flexible "
            "working hours and the option to work from home\n- Training budget and clear career paths\n- Modern "
            "office, team events and free snacks"
        ),
    ),
    (
        "en",
        "footer",
        "",
        (
            "Seniority level: Mid-Senior level\n\nEmployment type: Full-time\n\nJob function: "
            "Information Technology\n\nIndustries: IT Services and IT Consulting"
        ),
    ),
    (
        "en",
        "footer",
        "",
        (
            "{agency} is acting as an Employment Agency in relation to this vacancy. By applying "
            "for this role you agree to {agency} processing your personal data in line with our privacy notice. "
            "Due to the high volume of applications, only shortlisted candidates will be contacted."
        ),
    ),
    ("en", "footer", "GB", "This job was originally posted as www.{site}/jobs/{ref}"),
    (
        "en",
        "footer",
        "",
        (
            "Apply now\n\nSave job\n\nReport this job\n\nSimilar jobs you may be interested in\n\n"
            "Get email alerts for the latest jobs matching your search. By creating a job alert, you agree to our "
            "Terms of Use and Privacy Policy. You can unsubscribe at any time."
        ),
    ),
    (
        "en",
        "footer",
        "",
        (
            "Please quote reference {ref} in all correspondence. Unfortunately we are unable to "
            "offer visa sponsorship for this position; applicants must already have the right to work in the "
            "country. No agencies please."
        ),
    ),
    (
        "de",
        "eeo",
        "",
        (
            "Wir begrüßen alle Bewerbungen unabhängig von Geschlecht, Nationalität, ethnischer und "
            "sozialer Herkunft, Religion, Behinderung, Alter sowie sexueller Orientierung und Identität. "
            "Schwerbehinderte Menschen werden bei gleicher Eignung bevorzugt berücksichtigt."
        ),
    ),
    (
        "de",
        "benefits",
        "",
        (
            "Was wir bieten\n\n- Unbefristete Festanstellung in Vollzeit\n- Flexible "
            "Arbeitszeiten und Homeoffice-Möglichkeit\n- 30 Tage Urlaub\n- Betriebliche Altersvorsorge\n- "
            "Jobticket und Firmenfitness"
        ),
    ),
    (
        "de",
        "footer",
        "",
        (
            "Wir freuen uns auf Ihre Bewerbung! Bitte senden Sie Ihre vollständigen "
            "Bewerbungsunterlagen unter Angabe der Referenznummer {ref}, Ihres frühestmöglichen Eintrittstermins "
            "und Ihrer Gehaltsvorstellung über unser Online-Formular."
        ),
    ),
    (
        "de",
        "nav",
        "",
        (
            "Inserat teilen Link kopieren Per E-Mail versenden Auf WhatsApp teilen Auf Facebook teilen "
            "Auf LinkedIn teilen Merken Jetzt bewerben Stelleninserat Arbeitgeber Drucken"
        ),
    ),
    (
        "nl",
        "eeo",
        "",
        (
            "Wij vinden diversiteit belangrijk en nodigen iedereen uit om te solliciteren, ongeacht "
            "leeftijd, geslacht, afkomst, geloof, seksuele oriëntatie of beperking."
        ),
    ),
    (
        "nl",
        "footer",
        "",
        (
            "Spreekt deze vacature je aan? Solliciteer dan direct via de sollicitatieknop. "
            "Acquisitie naar aanleiding van deze vacature wordt niet op prijs gesteld. Een assessment kan deel "
            "uitmaken van de selectieprocedure."
        ),
    ),
    (
        "fr",
        "eeo",
        "",
        (
            "Conformément à la réglementation, tous nos postes sont ouverts aux personnes en situation "
            "de handicap. {company} s'engage en faveur de la diversité et de l'égalité des chances."
        ),
    ),
    (
        "fr",
        "footer",
        "",
        (
            "Envoyez votre candidature (CV et lettre de motivation) en indiquant la référence {ref}. "
            "Les candidatures seront traitées en toute confidentialité."
        ),
    ),
]

AGENCIES: dict[str, list[str]] = {
    "GB": [
        "Hays",
        "Michael Page",
        "Reed Specialist Recruitment",
        "Harnham",
        "Robert Walters",
        "Sanderson Recruitment",
        "Search Consultancy",
        "Hunter Selection",
    ],
    "US": ["Robert Half", "TEKsystems", "Insight Global", "Kforce Inc.", "Apex Systems", "Randstad USA"],
    "CA": ["Robert Half Canada", "Randstad Canada", "Procom", "Hays Canada", "Adecco"],
    "NL": ["YoungCapital", "Randstad Nederland", "Brunel", "Hays Nederland", "Olympia Uitzendbureau"],
    "DE": ["Hays AG", "Randstad Deutschland", "Amadeus FiRe", "Michael Page Deutschland", "GULP"],
    "AT": ["Trenkwalder", "epunkt GmbH", "Hays Österreich", "ISG Personalmanagement"],
    "IL": ["Ethosia", "Manpower Israel", "Adam Milo", "Nisha Group"],
    "IN": ["TeamLease", "Randstad India", "Quess Corp", "ABC Consultants"],
    "FR": ["Hays France", "Expectra", "Robert Walters France", "Michael Page France"],
}

AGENCY_INTROS = [
    (
        "Our client, a well-established {kind} based in {town}, is looking for a {title} to join their team on a "
        "permanent basis."
    ),
    "{agency} are delighted to be recruiting a {title} on behalf of a leading {kind} in {town}.",
    "We are currently working with a respected {kind} who are looking to appoint an experienced {title}.",
    "An exciting opportunity has arisen for a {title} to join a growing {kind} in {town}.",
]
AGENCY_OUTROS = [
    (
        "If you are interested in this {title} role, please apply now with an up-to-date CV or contact {agency} "
        "for a confidential discussion."
    ),
    (
        "Interested? Send your CV today - our consultants will be in touch within 48 hours if your profile "
        "matches the requirements."
    ),
    (
        "To find out more about this opportunity, click apply or call the {agency} team. Suitable candidates will "
        "be contacted within 3 working days."
    ),
]


def blocks_of(lang: str, kind: str, country: str = "") -> list[str]:
    """Pool texts of `kind` in `lang` that fit `country`, falling back to English."""
    for lg in (lang, "en"):
        found = [t for g, k, c, t in POOL if g == lg and k == kind and (not c or country in c.split())]
        if found:
            return found
    return [t for g, k, c, t in POOL if g == "en" and k == kind]
