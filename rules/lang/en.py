"""The game record's words in English (same keys and fields as :mod:`rules.lang.fr`)."""

from __future__ import annotations

WORDS: dict[str, str] = {
    # refusals of the game record
    "not_sat": (
        "nobody sits at the table yet: the first event is sit, with the rule set, the four "
        "players and their buy-ins"
    ),
    "already_sat": (
        "the players are already seated ({players}): one record holds one table of players; "
        "start another record for other players"
    ),
    "profile_variant": "the profile {profile} is for {profile_variant}, the table plays {variant}",
    "seating_none": (
        "the {variant} rules draw no seats: the players sit in the order sit lists them "
        "(E, S, W, N)"
    ),
    "seating_foreign": "{kind} seats the players of {owner}; at {variant}, {procedure}",
    "seating_in_game": (
        "game {game} is in play ({hands} hands played): the seats are drawn again only "
        "once it is over"
    ),
    "seating_refused": "the seats cannot be drawn: {reason}",
    "seating_needed": "game {game} has no seats yet: {procedure} first",
    "game_over": "game {game} is over ({why}): {procedure} for game {next}",
    "hand_in_play": (
        "hand {hand} of game {game} is still in play: it ends with a win or the exhausted "
        "wall before the next deal"
    ),
    "no_hand": "no hand is in play: the next event is the table's dealt state (dealt)",
    "wrong_variant": "the dealt state is a {dealt} deal, the table plays {variant}",
    "cycle_used": (
        "cycle {cycle} was already dealt as hand {hand} of game {game}: a dealt state opens "
        "one hand only"
    ),
    "wrong_leader": (
        "cycle {cycle} was dealt with {dealt} leading, but {leader} leads hand {hand} of game "
        "{game}{why}: the table must deal with {leader} leading"
    ),
    "why_leader_kept": " (he won the last hand and stays Leader)",
    "why_none": "",
    "dealt_refused": "the dealt state cannot open a hand: {reason}",
    "hand_refused": "hand {hand} of game {game}, {event} refused: {reason}",
    "replay_event": "event {number} ({type}): {reason}",
    "line_refused": "line {line} refused: {reason}",
    "bad_line": "line {line}: not a game event: {reason}",
    # how each rule set draws its seats
    "procedure_wenzhou": "each player draws a wind (wind_draw)",
    "procedure_sichuan": "each player throws two dice (dice_seating)",
    "procedure_wsom": "the winds are drawn from the row between an odd and an even tile (wind_row)",
    "procedure_simplified": "the players sit in the order sit lists them",
    # why a game ended
    "end_four_wins": "{leader} won four hands in a row as Leader",
    "end_sixteen_hands": "sixteen hands played",
    "end_one_hand": "a {variant} game is one hand",
    # what the record waits for
    "next_sit": "the players to sit down (sit)",
    "next_seating": "the seats of game {game}: {procedure}",
    "next_game": "the dealt state of hand 1 of game {game}",
    "next_deal": "the dealt state of hand {hand} of game {game}, {leader} leading",
    "next_play": "the play of hand {hand} of game {game}",
    # following the table
    "dealt_from_table": "dealt states come from the table, not from the floor's lines",
    "set_aside": "cycle {cycle} set aside: {reason}",
    "opened": "cycle {cycle}: hand {hand} of game {game}, {leader} leading",
    "taken": "line {line}: {type}",
    "hand_over": "hand {hand} of game {game} over: {end}; won by {winners}",
    "game_ended": "game {game} over: {why}",
    "hand_won": "won",
    "hand_three_won": "three players have won",
    "hand_all_out": "every player has gone out",
    "hand_all_penalised": "every player penalised",
    "hand_exhausted": "wall exhausted",
    "line_too_long": "longer than {limit} characters",
    "line_not_utf8": "not UTF-8 text",
    # mjtable game show
    "show_title": "{variant} table, point {point}; next: {next}",
    "show_game": "game {game}: {seats}; {hands} hands; Leader {leader}, wind {wind}; {state}",
    "show_in_play": "in play",
    "show_following": "following: {lines} floor lines taken; dealt states waiting: {waiting}",
    "col_player": "player",
    "col_seat": "seat",
    "col_buy_in": "buy-in",
    "col_game": "game {game}",
    "col_units": "units",
    "col_score": "score",
    "col_retention": "retention",
    "col_net": "net EUR",
    "col_hand": "hand",
    "col_cycle": "cycle",
    "col_leader": "Leader",
    "col_wind": "wind",
    "col_end": "end",
    "col_winners": "won by",
}
