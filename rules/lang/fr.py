"""Les mots de l'enregistrement de partie en français (mêmes clés et champs que
:mod:`rules.lang.en`), dans la langue des règlements."""

from __future__ import annotations

WORDS: dict[str, str] = {
    # refus de l'enregistrement de partie
    "not_sat": (
        "personne n'est encore assis à la table : le premier événement est sit, avec les "
        "règles, les quatre joueurs et leur cave"
    ),
    "already_sat": (
        "les joueurs sont déjà assis ({players}) : un enregistrement tient une seule tablée ; "
        "ouvrez-en un autre pour d'autres joueurs"
    ),
    "profile_variant": "le profil {profile} est pour {profile_variant}, la table joue {variant}",
    "seating_none": (
        "les règles {variant} ne tirent pas les places : les joueurs s'assoient dans l'ordre "
        "où sit les nomme (E, S, W, N)"
    ),
    "seating_foreign": "{kind} place les joueurs en {owner} ; en {variant}, {procedure}",
    "seating_in_game": (
        "la partie {game} est en cours ({hands} manches jouées) : les places ne sont tirées "
        "à nouveau qu'à sa fin"
    ),
    "seating_refused": "les places ne peuvent être tirées : {reason}",
    "seating_needed": "la partie {game} n'a pas encore de places : d'abord, {procedure}",
    "game_over": "la partie {game} est terminée ({why}) : pour la partie {next}, {procedure}",
    "hand_in_play": (
        "la manche {hand} de la partie {game} est encore en jeu : elle se termine par un "
        "Mah-Jong ou la muraille épuisée avant la distribution suivante"
    ),
    "no_hand": "aucune manche n'est en jeu : l'événement suivant est la donne de la table (dealt)",
    "wrong_variant": "la donne est une donne {dealt}, la table joue {variant}",
    "cycle_used": (
        "le cycle {cycle} a déjà été donné comme manche {hand} de la partie {game} : une donne "
        "n'ouvre qu'une seule manche"
    ),
    "wrong_leader": (
        "le cycle {cycle} a été donné avec {dealt} comme Leader, mais {leader} mène la manche "
        "{hand} de la partie {game}{why} : la table doit donner avec {leader} comme Leader"
    ),
    "why_leader_kept": " (il a gagné la manche précédente et reste Leader)",
    "why_none": "",
    "dealt_refused": "la donne ne peut ouvrir de manche : {reason}",
    "hand_refused": "manche {hand} de la partie {game}, {event} refusé : {reason}",
    "replay_event": "événement {number} ({type}) : {reason}",
    "line_refused": "ligne {line} refusée : {reason}",
    "bad_line": "ligne {line} : pas un événement de partie : {reason}",
    # comment chaque règle tire les places
    "procedure_wenzhou": "chaque joueur tire un Vent (wind_draw)",
    "procedure_sichuan": "chaque joueur lance deux dés (dice_seating)",
    "procedure_wsom": (
        "les Vents sont tirés de la rangée entre une tuile impaire et une tuile paire (wind_row)"
    ),
    "procedure_simplified": "les joueurs s'assoient dans l'ordre où sit les nomme",
    # pourquoi une partie s'est terminée
    "end_four_wins": "{leader} a gagné quatre manches de suite comme Leader",
    "end_sixteen_hands": "seize manches jouées",
    "end_one_hand": "une partie {variant} se joue en une manche",
    # ce que l'enregistrement attend
    "next_sit": "que les joueurs s'assoient (sit)",
    "next_seating": "les places de la partie {game} : {procedure}",
    "next_game": "la donne de la manche 1 de la partie {game}",
    "next_deal": "la donne de la manche {hand} de la partie {game}, {leader} Leader",
    "next_play": "le jeu de la manche {hand} de la partie {game}",
    # suivre la table
    "dealt_from_table": "les donnes viennent de la table, pas des lignes de la salle",
    "set_aside": "cycle {cycle} écarté : {reason}",
    "opened": "cycle {cycle} : manche {hand} de la partie {game}, {leader} Leader",
    "taken": "ligne {line} : {type}",
    "hand_over": "manche {hand} de la partie {game} terminée : {end} ; gagnée par {winners}",
    "game_ended": "partie {game} terminée : {why}",
    "hand_won": "Mah-Jong",
    "hand_three_won": "trois joueurs ont fait Mah-Jong",
    "hand_all_out": "tous les joueurs ont fait Mah-Jong",
    "hand_all_penalised": "tous les joueurs pénalisés",
    "hand_exhausted": "muraille épuisée",
    "line_too_long": "plus longue que {limit} caractères",
    "line_not_utf8": "pas du texte UTF-8",
    # mjtable game show
    "show_title": "table {variant}, point {point} ; ensuite : {next}",
    "show_game": (
        "partie {game} : {seats} ; {hands} manches ; Leader {leader}, Vent {wind} ; {state}"
    ),
    "show_in_play": "en cours",
    "show_following": "suivi : {lines} lignes de la salle prises ; donnes en attente : {waiting}",
    "col_player": "joueur",
    "col_seat": "place",
    "col_buy_in": "cave",
    "col_game": "partie {game}",
    "col_units": "unités",
    "col_score": "points",
    "col_retention": "retenue",
    "col_net": "net EUR",
    "col_hand": "manche",
    "col_cycle": "cycle",
    "col_leader": "Leader",
    "col_wind": "Vent",
    "col_end": "fin",
    "col_winners": "gagnée par",
}
