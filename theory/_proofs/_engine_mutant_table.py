"""The table of semantic mutants of the engine model (``theory/coq/engine/Model.v``).

Each row: a name, the bug in words, an exact substitution of ``Model.v`` (the
old text must occur exactly once), the theorem of ``engine/Statements.v`` a
concrete run refutes, that run in one line, and the Coq script proving the
negation of the theorem's statement for the mutant (:mod:`._engine_mutants`
writes ``Theorem refuted : ~ (<statement>)`` and compiles it).

A script starts with ``intro H`` (the statement, for the mutant), instantiates
it on a concrete configuration
``mkConfig B hard fixed mgmt dfloor cache_prefix keep_pending nres`` and operation
list, computes with ``vm_compute`` and closes on the contradiction.
"""

from __future__ import annotations

import dataclasses

__all__ = ["MUTANTS", "ModelMutant"]


@dataclasses.dataclass(frozen=True)
class ModelMutant:
    """One semantic mutant of ``Model.v`` and its refutation.

    Attributes
    ----------
    name : str
        Identifier (a Python/pytest id).
    bug : str
        The bug, as an engine's behaviour.
    old, new : str
        The substitution (``old`` occurs exactly once in ``Model.v``).
    theorem : str
        The theorem of ``engine/Statements.v`` whose statement is false for the mutant.
    run : str
        The concrete run, in one line.
    proof : str
        The Coq script proving ``~ (<statement>)`` for the mutant.
    """

    name: str
    bug: str
    old: str
    new: str
    theorem: str
    run: str
    proof: str


_OFFLOAD3 = """[OCall [1] 1 2 [1] 1; OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OCall [2] 1 2 [1] 1; OResult 2 6 (10, 10) (1, 1) 1 9 (1, 1) [1]; OCall [3] 1 2 [1] 1]"""

# A plain user message: OPlain KUser pin data cost dash.
MUTANTS: tuple[ModelMutant, ...] = (
    ModelMutant(
        name="archive_alone_unstored",
        bug="archiving one visible block alone writes no payload to the store",
        old="            with_store s1 (put (KB n) (VRaw (b_data b)) (store s))\n"
            "          else update s",
        new="            with_store s1 (store s)\n"
            "          else update s",
        theorem="workspace_recoverability",
        run="B=100; user message B1 (bytes 7); archive [B1]: recover B1 = None, not Some 7",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OArchive [UB 1] (2, 2) [] 1] eq_refl).
cbv zeta in H. vm_compute in H.
specialize (H _ (or_introl eq_refl)). vm_compute in H.
discriminate (H ltac:(discriminate)).
""",
    ),
    ModelMutant(
        name="offload_wrong_key",
        bug="the guard files an offloaded result's payload under the next block's key",
        old="  | Some b => with_store s1 (put (KB x) (VRaw (b_data b)) (store s))",
        new="  | Some b => with_store s1 (put (KB (S x)) (VRaw (b_data b)) (store s))",
        theorem="workspace_recoverability",
        run="hard=20; call B1 [1;2]; result B2 (10 tokens) admitted; result B3 (10) offloads B2: "
            "recover B2 = None, not Some 5",
        proof="""
intro H.
specialize (H (mkConfig 100 20 0 10 0 false false 0) 0 _
  [OCall [1; 2] 1 2 [1; 1] 1;
   OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OResult 2 6 (10, 10) (1, 1) 1 9 (1, 1) [1]] eq_refl).
cbv zeta in H. vm_compute in H.
specialize (H _ (or_intror (or_introl eq_refl))). vm_compute in H.
discriminate (H ltac:(discriminate)).
""",
    ),
    ModelMutant(
        name="restore_group_keeps_inlined_archived",
        bug="restoring a group leaves its inlined members archived while their payload goes",
        old="                                 if inlined es (b_id b)\n",
        new="                                 if negb (inlined es (b_id b))\n",
        theorem="workspace_recoverability",
        run="user B1, B2; archive [B1;B2] (group G1, both inlined); restore [G1]: "
            "recover B1 = None, not Some 7",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1;
   OArchive [UB 1; UB 2] (2, 2) [] 1; ORestore [UG 1] 1] eq_refl).
cbv zeta in H. vm_compute in H.
specialize (H _ (or_introl eq_refl)). vm_compute in H.
discriminate (H ltac:(discriminate)).
""",
    ),
    ModelMutant(
        name="pin_floor_without_block",
        bug="a pin is admitted when the management floor fits without the pinned block",
        old="  if pin && negb (floor s + c <=? budget (cfg s)) then (s, refuse RFloor)",
        new="  if pin && negb (floor s <=? budget (cfg s)) then (s, refuse RFloor)",
        theorem="workspace_budget",
        run="B=20, mgmt=10; pin a 15-token user message: floor 25 > B",
        proof="""
intro H.
specialize (H (mkConfig 20 20 0 10 0 false false 0) 0 _ [OPlain KUser true 1 15 1]
  ltac:(vm_compute; lia) eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. lia.
""",
    ),
    ModelMutant(
        name="floor_without_pinned",
        bug="the management floor leaves out the pinned blocks",
        old="Definition floor (s : state) : nat := fixed (cfg s) + pinned_cost s + mgmt (cfg s)"
            " + tail_need s.",
        new="Definition floor (s : state) : nat := fixed (cfg s) + mgmt (cfg s) + tail_need s.",
        theorem="workspace_budget",
        run="B=20, mgmt=10; pin two 8-token user messages: floor 26 > B",
        proof="""
intro H.
specialize (H (mkConfig 20 20 0 10 0 false false 0) 0 _
  [OPlain KUser true 1 8 1; OPlain KUser true 2 8 1] ltac:(vm_compute; lia) eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. lia.
""",
    ),
    ModelMutant(
        name="management_current_dashboard",
        bug="the management rendering carries the ordinary dashboard, not the management "
            "one (at most the worst-case bound the floor budgets)",
        old="  ++ tail_msgs s ++ [dash_msg (mdash_cost s)].",
        new="  ++ tail_msgs s ++ [dash_msg (dash s)].",
        theorem="workspace_budget",
        run="B=10, mgmt=5; a 5-token user message with an 11-token dashboard: management "
            "rendering 11 > B",
        proof="""
intro H.
specialize (H (mkConfig 10 10 0 5 0 false false 0) 0 _ [OPlain KUser false 1 5 11]
  ltac:(vm_compute; lia) eq_refl).
cbv zeta in H. destruct H as [_ H]. vm_compute in H. lia.
""",
    ),
    ModelMutant(
        name="preflight_strict",
        bug="preflight switches to the management rendering at total = B (strict <)",
        old="  if total s <=? budget (cfg s) then Normal else Management.",
        new="  if total s <? budget (cfg s) then Normal else Management.",
        theorem="workspace_dashboard",
        run="B=10; a 9-token user message with a 1-token dashboard: total 10 = B, mode "
            "Management",
        proof="""
intro H.
specialize (H (mkConfig 10 10 0 5 0 false false 0) 0 _ [OPlain KUser false 1 9 1] eq_refl).
cbv zeta in H. destruct H as [_ [_ H]]. vm_compute in H.
discriminate (proj2 H (le_n _)).
""",
    ),
    ModelMutant(
        name="dashboard_omits_pending",
        bug="the dashboard's conversation figure leaves out the pending-call placeholders",
        old="  + costs (pending_msgs s).",
        new="  + 0.",
        theorem="workspace_dashboard",
        run="a tool call B1 with one pending call (3-token placeholder): total 3, rendering "
            "costs 6",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OCall [1] 1 2 [3] 1] eq_refl).
cbv zeta in H. destruct H as [_ [H _]]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="recover_ignores_groups",
        bug="recover reads a block's own store key only, never a group payload's inlined entry",
        old="             | _ => inline_in n (store s)",
        new="             | _ => None",
        theorem="workspace_recoverability",
        run="user B1 (bytes 7), B2; archive [B1;B2] (group G1): recover B1 = None, not Some 7",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1; OArchive [UB 1; UB 2] (2, 2) [] 1]
  eq_refl).
cbv zeta in H. vm_compute in H.
specialize (H _ (or_introl eq_refl)). vm_compute in H.
discriminate (H ltac:(discriminate)).
""",
    ),
    ModelMutant(
        name="restore_alone_stays_archived",
        bug="restoring a block archived alone drops its payload but leaves it archived",
        old="                  then set_block Visible None 0 (0, 0) (b_tok b) b else b) in",
        new="                  then set_block Archived None 0 (0, 0) (b_tok b) b else b) in",
        theorem="workspace_recoverability",
        run="user B1 (bytes 7); archive [B1]; restore [B1]: recover B1 = None, not Some 7",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OArchive [UB 1] (2, 2) [] 1; ORestore [UB 1] 1] eq_refl).
cbv zeta in H. vm_compute in H.
specialize (H _ (or_introl eq_refl)). vm_compute in H.
discriminate (H ltac:(discriminate)).
""",
    ),
    ModelMutant(
        name="render_drops_pending",
        bug="the ordinary rendering leaves out the pending-call placeholders the total counts",
        old="  flat_map (turn_msgs s) (turns s) ++ pending_msgs s ++ [dash_msg (dash s)].",
        new="  flat_map (turn_msgs s) (turns s) ++ [dash_msg (dash s)].",
        theorem="workspace_dashboard",
        run="a tool call B1 with one pending call (3-token placeholder): total 6, rendering "
            "costs 3",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OCall [1] 1 2 [3] 1] eq_refl).
cbv zeta in H. destruct H as [_ [H _]]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="render_drops_plain_content",
        bug="the ordinary rendering drops visible system, user and assistant messages (their "
            "cost dropped too)",
        old="      else [mkMsg me FContent (plain_role (b_kind b)) (snd (b_c b)) dat]",
        new="      else []",
        theorem="workspace_fidelity",
        run="one visible user message B1: the rendering holds only the dashboard",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OPlain KUser false 7 5 1] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="management_without_dashboard",
        bug="the management rendering loses its dashboard",
        old="  ++ tail_msgs s ++ [dash_msg (mdash_cost s)].",
        new="  ++ tail_msgs s ++ [].",
        theorem="workspace_fidelity",
        run="B=10; a 15-token user message: the management rendering is empty, no dashboard",
        proof="""
intro H.
specialize (H (mkConfig 10 10 0 5 0 false false 0) 0 _ [OPlain KUser false 7 15 1] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="empty_renderer",
        bug="the renderer returns no message in every state",
        old="  match mode_of s with Normal => normal_render s"
            " | Management => management_render s end.",
        new="  [].",
        theorem="workspace_fidelity",
        run="one visible user message B1: the rendering is [], not [B1; dashboard]",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OPlain KUser false 7 5 1] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="deleted_result_no_tombstone",
        bug="a deleted tool result whose call is in the prompt leaves no tombstone (the call "
            "goes unanswered)",
        old="  | Deleted => if tf then [mkMsg me FTombstone (RTool (b_cid b)) (b_t b) SNone]"
            " else []",
        new="  | Deleted => []",
        theorem="workspace_fidelity",
        run="call B1 [1]; result B2; delete [B2]: no tombstone answers call 1",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OCall [1] 1 2 [1] 1; OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1]; ODelete [UB 2] 1]
  eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="ledger_offloaded_as_archived",
        bug="the ledger reports a block the guard offloaded as archived",
        old="               (type_of (b_kind b)) (b_level b) par st]",
        new="               (type_of (b_kind b)) (b_level b) par\n"
            "               (match st with Offloaded => Archived | _ => st end)]",
        theorem="workspace_ledger",
        run="hard=20; call B1 [1;2]; results B2, B3 (10 tokens each): B3 offloads B2, whose "
            "row says archived",
        proof="""
intro H.
specialize (H (mkConfig 100 20 0 10 0 false false 0) 0 _
  [OCall [1; 2] 1 2 [1; 1] 1;
   OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OResult 2 6 (10, 10) (1, 1) 1 9 (1, 1) [1]] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="ledger_age_off_by_one",
        bug="the ledger's ages count root turns from 0, one too many",
        old="    end) (rooted 1 (turns s)).",
        new="    end) (rooted 0 (turns s)).",
        theorem="workspace_ledger",
        run="user B1, B2: ledger ages 2 and 1, not 1 and 0",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="stub_names_inner_group",
        bug="a member stub names the member's own (inner) group instead of the top-level "
            "group whose handle the prompt shows",
        old="                   (SStub (KG (g_id g)))]",
        new="                   (SStub (KG g0))]",
        theorem="workspace_fidelity",
        run="call B1 [1;2]; results B2, B3; archive [B2;B3] (G1); user B4; archive [G1;B4] "
            "(G2): B3's stub names G1, not G2",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OCall [1; 2] 1 2 [1; 1] 1;
   OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OResult 2 6 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OArchive [UB 2; UB 3] (2, 2) [(3, 1)] 1; OPlain KUser false 7 5 1;
   OArchive [UG 1; UB 4] (2, 2) [(3, 1)] 1] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="stub_dropped",
        bug="a group member that is a tool result shows no stub, leaving its call unanswered",
        old="              else if tf then\n",
        new="              else if false then\n",
        theorem="workspace_protocol",
        run="call B1 [1;2]; results B2, B3; archive [B2;B3] (G1): call 2 has no tool message",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OCall [1; 2] 1 2 [1; 1] 1;
   OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OResult 2 6 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OArchive [UB 2; UB 3] (2, 2) [(3, 1)] 1] eq_refl).
destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="orphan_tool_message",
        bug="a tool result renders as a tool message even when its call has left the prompt",
        old="  let tf := res && tf0 in",
        new="  let tf := res in",
        theorem="workspace_protocol",
        run="call B1 [1]; result B2; archive [B1]: B2 is a tool message answering no call",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OCall [1] 1 2 [1] 1; OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1];
   OArchive [UB 1] (2, 2) [] 1] eq_refl).
destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="block_number_skips",
        bug="registering a plain message skips a block number",
        old="        let n := S (nblocks s) in\n"
            "        (with_dash (with_counts (with_turns s (turns s ++ [TP",
        new="        let n := S (S (nblocks s)) in\n"
            "        (with_dash (with_counts (with_turns s (turns s ++ [TP",
        theorem="workspace_stable_ids",
        run="one user message: its ID is B2, the blocks are not B1..Bn",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OPlain KUser false 7 5 1] (ORecover 1)
  eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="group_counter_not_advanced",
        bug="a new archive group does not advance the group counter (its ID is used again by "
            "the next group)",
        old="  with_counts (with_store s2 (put (KG gid) (VGrp es) (store s))) (nblocks s) gid.",
        new="  with_counts (with_store s2 (put (KG gid) (VGrp es) (store s))) (nblocks s)"
            " (ngroups s).",
        theorem="workspace_stable_ids",
        run="user B1, B2; archive [B1;B2]: group G1 exists while the counter says 0 groups",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1; OArchive [UB 1; UB 2] (2, 2) [] 1]
  (ORecover 1) eq_refl).
cbv zeta in H. destruct H as [_ [_ [_ [H _]]]]. vm_compute in H.
specialize (H _ (or_introl eq_refl)). vm_compute in H. lia.
""",
    ),
    ModelMutant(
        name="guard_one_over_hard",
        bug="the guard admits a result whose candidate is one token over the hard limit",
        old="    if t0 <=? hard (cfg s1) then (GAdmit, [])",
        new="    if t0 <=? S (hard (cfg s1)) then (GAdmit, [])",
        theorem="workspace_guard",
        run="hard=20; call B1 [1] (2 tokens, 1-token pending placeholder); result of 18 tokens "
            "with a 1-token dashboard: candidate 21 > 20, admitted",
        proof="""
intro H.
specialize (H (mkConfig 100 20 0 10 0 false false 0) 0 _ [OCall [1] 1 2 [1] 1]
  1 5 (18, 18) (1, 1) 1 9 (1, 1) [1] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity)). destruct H as [_ [_ [H _]]].
destruct (H eq_refl) as [k Hk]. destruct k as [|[|k]]; vm_compute in Hk; lia.
""",
    ),
    ModelMutant(
        name="rejected_keeps_content",
        bug="a result the guard rejects keeps its content bytes instead of the rejection notice",
        old="then mkBlock n KResult notice cid [] nc p t true Visible",
        new="then mkBlock n KResult data cid [] nc p t true Visible",
        theorem="workspace_guard",
        run="B=20; call B1 [1] (2 tokens); a 30-token result (bytes 5, notice 9) is rejected "
            "over the cap: B2 holds 5, not the notice 9",
        proof="""
intro H.
specialize (H (mkConfig 20 40 0 5 0 false false 0) 0 _ [OCall [1] 1 2 [1] 1]
  1 5 (30, 30) (1, 1) 1 9 (1, 1) [1] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity)). destruct H as [H _].
destruct H as [b [Hb [_ [_ Hg]]]]. vm_compute in Hb. injection Hb as <-.
vm_compute in Hg. destruct Hg as [Hg _]. discriminate Hg.
""",
    ),
    ModelMutant(
        name="cap_ignores_call",
        bug="the guard's cap check leaves out the cost of the call the result answers",
        old="+ pinned_cost s1 + parent_cost + dfloor (cfg s1)",
        new="+ pinned_cost s1 + dfloor (cfg s1)",
        theorem="workspace_guard",
        run="B=20; call B1 [1] (5 tokens); an 18-token result: 18 + 5 > B must be rejected "
            "over the cap, is admitted",
        proof="""
intro H.
specialize (H (mkConfig 20 100 0 10 0 false false 0) 0 _ [OCall [1] 1 5 [1] 1]
  1 5 (18, 18) (1, 1) 1 9 (1, 1) [1] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity)). destruct H as [_ [H _]].
vm_compute in H. discriminate (proj2 H ltac:(lia)).
""",
    ),
    ModelMutant(
        name="offload_newest_first",
        bug="the guard offloads the newest raw result first (the documented order is oldest first)",
        old="                     end) (turns s).\n\nDefinition pick",
        new="                     end) (rev (turns s)).\n\nDefinition pick",
        theorem="workspace_guard",
        run="hard=30; calls B1, B3, B5 with 10-token results B2, B4; B5's 10-token result is "
            "7 over: offloads [B4], not [B2]",
        proof="""
intro H.
specialize (H (mkConfig 100 30 0 10 0 false false 0) 0 _ """ + _OFFLOAD3 + """
  3 7 (10, 10) (1, 1) 1 9 (1, 1) [1] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity)). destruct H as [_ [_ [_ H]]].
specialize (H 1 eq_refl ltac:(vm_compute; intro E; discriminate E)).
vm_compute in H. destruct H as [_ H]. discriminate H.
""",
    ),
    ModelMutant(
        name="handle_names_next_key",
        bug="a block's own handle names the next block's payload key",
        old="let sh := SHandle (KB (b_id b)) (b_level b) (payload_at s (KB (b_id b))) in",
        new="let sh := SHandle (KB (S (b_id b))) (b_level b)"
            " (payload_at s (KB (S (b_id b)))) in",
        theorem="workspace_fidelity",
        run="user B1 (bytes 7); archive [B1]: its handle shows key B2, not B1",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OArchive [UB 1] (2, 2) [] 1] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="delete_keeps_block_payload",
        bug="deleting a block archived alone leaves its payload in the store",
        old="                  then set_block Deleted None 0 (0, 0) 0 b else b) in\n"
            "      with_store s1 (remove_key (KB n) (store s))",
        new="                  then set_block Deleted None 0 (0, 0) 0 b else b) in\n"
            "      with_store s1 (store s)",
        theorem="workspace_deletion",
        run="user B1 (bytes 7); archive [B1]; delete [B1]: the store still holds key B1",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OArchive [UB 1] (2, 2) [] 1] [UB 1] 1 [] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity) (UB 1) (or_introl eq_refl)).
destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="delete_keeps_group_payload",
        bug="deleting a group leaves the group's payload in the store",
        old="                                  | KG h => negb (doomed h)",
        new="                                  | KG h => true",
        theorem="workspace_deletion",
        run="user B1, B2; archive [B1;B2] (group G1); delete [G1]: the store still holds key G1",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1; OArchive [UB 1; UB 2] (2, 2) [] 1]
  [UG 1] 1 [] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity) (UG 1) (or_introl eq_refl)).
destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="delete_without_tombstone",
        bug="deleting a block drops its payload but leaves it archived instead of a tombstone",
        old="                  then set_block Deleted None 0 (0, 0) 0 b else b) in\n"
            "      with_store s1 (remove_key (KB n) (store s))",
        new="                  then set_block Archived None 0 (0, 0) 0 b else b) in\n"
            "      with_store s1 (remove_key (KB n) (store s))",
        theorem="workspace_deletion",
        run="user B1 (bytes 7); delete [B1]: B1 is archived, not deleted",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OPlain KUser false 7 5 1] [UB 1] 1 []
  eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity) (UB 1) (or_introl eq_refl)).
destruct H as [_ H]. destruct (H 1 (or_introl eq_refl)) as [H' _].
vm_compute in H'. discriminate H'.
""",
    ),
    ModelMutant(
        name="recover_reads_deleted",
        bug="recover returns a deleted block's registered bytes",
        old="      | Deleted => None\n      | Visible | Pinned => Some (b_data b)",
        new="      | Deleted => Some (b_data b)\n      | Visible | Pinned => Some (b_data b)",
        theorem="workspace_deletion",
        run="user B1 (bytes 7); delete [B1]: recover B1 = Some 7, not None",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OPlain KUser false 7 5 1] [UB 1] 1 []
  eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity) (UB 1) (or_introl eq_refl)).
destruct H as [_ H]. destruct (H 1 (or_introl eq_refl)) as [_ [H' _]].
vm_compute in H'. discriminate H'.
""",
    ),
    ModelMutant(
        name="restore_revives_deleted",
        bug="restore accepts a deleted block and brings it back into the prompt",
        old="          | Deleted => Some RDeleted",
        new="          | Deleted => match a with ARestore => None | _ => Some RDeleted end",
        theorem="workspace_deletion",
        run="user B1 (bytes 7); delete [B1]; later restore [B1]: B1 is visible again",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OPlain KUser false 7 5 1] [UB 1] 1
  [ORestore [UB 1] 1] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity) (UB 1) (or_introl eq_refl)).
destruct H as [_ H]. destruct (H 1 (or_introl eq_refl)) as [H' _].
vm_compute in H'. discriminate H'.
""",
    ),
    ModelMutant(
        name="delete_group_spares_nested_leaves",
        bug="deleting a group turns only its direct member blocks into tombstones; the blocks "
            "of the groups nested in it stay archived",
        old="let dead (b : block) := match b_group b with Some h => doomed h"
            " | None => false end in",
        new="let dead (b : block) := match b_group b with Some h => h =? g"
            " | None => false end in",
        theorem="workspace_deletion",
        run="user B1, B2, B3; archive [B1;B2] (G1); archive [G1;B3] (G2); delete [G2]: leaf B1 "
            "is not a tombstone",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1; OArchive [UB 1; UB 2] (2, 2) [] 1;
   OPlain KUser false 9 5 1; OArchive [UG 1; UB 3] (2, 2) [] 1] [UG 2] 1 [] eq_refl).
cbv zeta in H. specialize (H ltac:(vm_compute; reflexivity) (UG 2) (or_introl eq_refl)).
destruct H as [_ H]. destruct (H 1 ltac:(vm_compute; left; reflexivity)) as [H' _].
vm_compute in H'. discriminate H'.
""",
    ),
    ModelMutant(
        name="archive_alone_wrong_bytes",
        bug="archiving one visible block alone stores other bytes than the block's under its key",
        old="            with_store s1 (put (KB n) (VRaw (b_data b)) (store s))\n"
            "          else update s",
        new="            with_store s1 (put (KB n) (VRaw (S (b_data b))) (store s))\n"
            "          else update s",
        theorem="workspace_archive_contract",
        run="user B1 (bytes 7); archive [B1]: reading B1's handle key yields bytes 8, not 7",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OArchive [UB 1] (2, 2) [] 1] eq_refl).
cbv zeta in H.
specialize (H (mkMsg (PB 1) (FHandle (UB 1)) RUser 2 (SHandle (KB 1) 1 (VRaw 8))) (UB 1)
  ltac:(vm_compute; left; reflexivity) eq_refl).
destruct H as [_ [_ H]]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="handle_shows_wrong_level",
        bug="a block's own handle shows an archive level one above the block's",
        old="let sh := SHandle (KB (b_id b)) (b_level b) (payload_at s (KB (b_id b))) in",
        new="let sh := SHandle (KB (b_id b)) (S (b_level b)) (payload_at s (KB (b_id b))) in",
        theorem="workspace_archive_contract",
        run="user B1 (bytes 7); archive [B1] (level 1): its handle shows level 2",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OArchive [UB 1] (2, 2) [] 1] eq_refl).
cbv zeta in H.
specialize (H (mkMsg (PB 1) (FHandle (UB 1)) RUser 2 (SHandle (KB 1) 2 (VRaw 7))) (UB 1)
  ltac:(vm_compute; left; reflexivity) eq_refl).
destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="nested_group_wrong_key",
        bug="a new group references a member group under another group's payload key (the "
            "next group's)",
        old="(ERef u (KG g), S (g_level x), g_leaves x, g_tok x)",
        new="(ERef u (KG (S g)), S (g_level x), g_leaves x, g_tok x)",
        theorem="workspace_archive_contract",
        run="user B1..B5; archive [B1;B2] (G1), [B3;B4] (G2), [G1;B5] (G3): reading G3's "
            "handle key yields B3, B4, B5, not B1, B2, B5",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1; OArchive [UB 1; UB 2] (2, 2) [] 1;
   OPlain KUser false 9 5 1; OPlain KUser false 10 5 1; OArchive [UB 3; UB 4] (2, 2) [] 1;
   OPlain KUser false 11 5 1; OArchive [UG 1; UB 5] (3, 3) [] 1] eq_refl).
cbv zeta in H.
specialize (H (mkMsg (PB 1) (FHandle (UG 3)) RUser 3
                 (SHandle (KG 3) 2 (VGrp [ERef (UG 1) (KG 2); EIn (UB 5) 11]))) (UG 3)
  ltac:(vm_compute; left; reflexivity) eq_refl).
destruct H as [_ [_ H]]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="group_refs_wrong_block_key",
        bug="a new group references an archived member block under the next block's key "
            "(recover still finds the block by its own key)",
        old="else (ERef u (KB n), S (b_level b), [n], b_tok b)",
        new="else (ERef u (KB (S n)), S (b_level b), [n], b_tok b)",
        theorem="workspace_archive_contract",
        run="user B1, B2; archive [B1]; archive [B1;B2] (G1): reading G1's handle key finds "
            "no payload under key B2, not B1 and B2's bytes",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OPlain KUser false 8 5 1; OArchive [UB 1] (2, 2) [] 1;
   OArchive [UB 1; UB 2] (3, 3) [] 1] eq_refl).
cbv zeta in H.
specialize (H (mkMsg (PB 1) (FHandle (UG 1)) RUser 3
                 (SHandle (KG 1) 2 (VGrp [ERef (UB 1) (KB 2); EIn (UB 2) 8]))) (UG 1)
  ltac:(vm_compute; left; reflexivity) eq_refl).
destruct H as [_ [_ H]]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="archive_level_not_raised",
        bug="archiving an archived block again leaves its level as it was",
        old="                        then set_block Archived None (S (b_level x)) h (b_tok x) x"
            " else x)",
        new="                        then set_block Archived None (b_level x) h (b_tok x) x"
            " else x)",
        theorem="workspace_ledger_levels",
        run="user B1; archive [B1] (level 1); archive [B1] again: B1 stays at level 1, not 2",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _
  [OPlain KUser false 7 5 1; OArchive [UB 1] (2, 2) [] 1] 1 (2, 2) [] 1
  (mkBlock 1 KUser 7 0 [] (5, 5) (0, 0) 0 false Archived None 1 (2, 2) 5) eq_refl).
cbv zeta in H.
destruct (H ltac:(vm_compute; reflexivity) ltac:(vm_compute; reflexivity)) as [b' [Hb' [_ [L _]]]].
vm_compute in Hb'. injection Hb' as <-. vm_compute in L. discriminate L.
""",
    ),
    ModelMutant(
        name="archive_records_no_tok",
        bug="archiving a visible block alone records ~Tok 0 instead of its position's cost",
        old="                        then set_block Archived None 1 h (pos_cost s x) x else x) in",
        new="                        then set_block Archived None 1 h 0 x else x) in",
        theorem="workspace_ledger_levels",
        run="user B1 (5 tokens); archive [B1]: its ~Tok is 0, not 5",
        proof="""
intro H.
specialize (H (mkConfig 100 100 0 10 0 false false 0) 0 _ [OPlain KUser false 7 5 1] 1 (2, 2) [] 1
  (plain_block 1 KUser false 7 5) eq_refl).
cbv zeta in H.
destruct (H ltac:(vm_compute; reflexivity) ltac:(vm_compute; reflexivity)) as [b' [Hb' [_ [_ T]]]].
vm_compute in Hb'. injection Hb' as <-. vm_compute in T. discriminate T.
""",
    ),
    ModelMutant(
        name="floor_without_kept_batch",
        bug="keep_pending: the floor leaves out the batch still waiting for results, so the "
            "guard admits a result the management rendering that keeps the batch cannot hold",
        old="Definition floor (s : state) : nat := fixed (cfg s) + pinned_cost s + mgmt (cfg s)"
            " + tail_need s.",
        new="Definition floor (s : state) : nat := fixed (cfg s) + pinned_cost s + mgmt (cfg s).",
        theorem="workspace_budget",
        run="B=100, keep_pending; a call [1;2] (2 tokens); result 1 of 95 tokens with a 5-token "
            "dashboard: admitted, the management rendering keeps call, result and placeholder "
            "(98) beside the 10-token dashboard: 108 > B",
        proof="""
intro H.
specialize (H (mkConfig 100 1000 0 10 0 false true 0) 0 _
  [OCall [1; 2] 1 2 [1; 1] 1; OResult 1 5 (95, 95) (1, 1) 1 9 (1, 1) [5]]
  ltac:(vm_compute; lia) eq_refl).
cbv zeta in H. destruct H as [_ [H _]]. vm_compute in H. lia.
""",
    ),
    ModelMutant(
        name="management_drops_kept_batch",
        bug="keep_pending: the management rendering drops the tool-call batch still waiting "
            "for results (the rendering before keep_pending)",
        old="  ++ tail_msgs s ++ [dash_msg (mdash_cost s)].",
        new="  ++ [dash_msg (mdash_cost s)].",
        theorem="workspace_fidelity",
        run="B=100, keep_pending; a call [1;2] with a 100-token dashboard: the management "
            "rendering is the dashboard alone, not the call, its two placeholders and the "
            "dashboard",
        proof="""
intro H.
specialize (H (mkConfig 100 1000 0 10 0 false true 0) 0 _ [OCall [1; 2] 1 2 [1; 1] 100] eq_refl).
cbv zeta in H. destruct H as [H _]. vm_compute in H. discriminate H.
""",
    ),
    ModelMutant(
        name="guard_offloads_kept_batch",
        bug="keep_pending: the guard offloads an earlier result of the batch still waiting "
            "for results (the batch is no longer whole)",
        old="  let cs := if tail_on s1 then filter (fun e => b_id (fst e) <? owner s1) cs0"
            " else cs0 in",
        new="  let cs := cs0 in",
        theorem="workspace_guard",
        run="hard=30, keep_pending; a call [1;2;3]; result 1 (10 tokens) admitted; result 2 "
            "(20 tokens) over the hard limit: the guard offloads B2 (a result of the waiting "
            "batch) instead of rejecting B3",
        proof="""
intro H.
specialize (H (mkConfig 200 30 0 10 0 false true 0) 0 _
  [OCall [1; 2; 3] 1 2 [1; 1; 1] 1; OResult 1 5 (10, 10) (1, 1) 1 9 (1, 1) [1]]
  2 6 (20, 20) (1, 1) 1 9 (1, 1) [1] eq_refl).
cbv zeta in H. destruct (H ltac:(vm_compute; reflexivity)) as [_ [_ [_ G]]].
specialize (G 1 eq_refl ltac:(vm_compute; discriminate)).
vm_compute in G. destruct G as [G _]. discriminate G.
""",
    ),
)
