(* The workspace invariants of the paper, proved on the engine model for
   every sequence of operations.  Each theorem is named after the invariant
   it proves (vistalab.workspace.INVARIANTS: budget, protocol,
   recoverability, stable_ids, dashboard) and restates its hypotheses so it
   reads on its own; the paper's sentence is in the comment above it.

   Reading guide.  [init c d = Some s0] is a workspace created with
   configuration [c] (budget B = budget c, guard ceiling = hard c, fixed
   overhead = fixed c: tool schemas, protocol, reply priming; worst-case
   management dashboard = mgmt c); [run s0 ops] is the state after any
   sequence of operations [ops] (registration of system, user, assistant,
   tool-call and tool-result messages through the budget guard; archive,
   restore, delete, recover), refused operations included. *)

From Coq Require Import List Arith Lia ZArith.
Import ListNotations.
From VistaLabEngine Require Import Model Spec Claims Theorems Anthropic SpecProofs GuardProofs
  DeletionProofs ArchiveProofs GroupProofs.

(* budget.  Methodology, "Workspace invariants": "|C_t| <= B after preflight
   and final assembly."  The management floor -- fixed overhead, pinned
   blocks, the worst-case management dashboard and, with keep_pending while
   calls wait, the kept batch with a notice reserve per pending call
   ([tail_need]) -- fits the budget at creation (the engine refuses the
   configuration otherwise) and after every operation (a pin, or a tool-call
   message whose batch would not fit, is refused; a result whose admission
   would break it is rejected); then every rendering,
   ordinary or management, fits the budget; and |C_t| is the fixed overhead
   plus the cost of every form the specification requires (Spec.v
   [sp_tokens]: each visible block in full, each handle, placeholder, stub,
   tombstone and pending placeholder, the dashboard), so a rendering that
   drops content does not satisfy it. *)
Theorem workspace_budget (c : config) (d : nat) (s0 : state) (ops : list op) :
  fixed c + mgmt c <= budget c ->
  init c d = Some s0 ->
  let s := run s0 ops in
  fixed c + pinned_cost s + mgmt c + tail_need s <= budget c /\ tokens s <= budget c /\
  tokens s = sp_tokens s.
Proof.
  intros _ I s.
  assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  assert (F : floor s <= budget (cfg s)).
  { unfold s. rewrite cfg_run. apply floor_run. rewrite (cfg_init c d s0 I).
    exact (floor_init c d s0 I). }
  split; [|split; [|exact (proj1 (budget_forms_run c d s0 ops I))]].
  - unfold floor in F. rewrite C in F. exact F.
  - rewrite <- C. exact (tokens_bound s F).
Qed.

(* dashboard.  Methodology, "Workspace invariants": "the dashboard reports
   the same token estimates used by these checks."  The dashboard's figures
   add up to the total preflight compares with B (normal mode exactly when
   total <= B); that total is the fixed overhead plus the cost of every
   message of the ordinary rendering, dashboard included. *)
Theorem workspace_dashboard (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  total s = overhead s + conversation s + dash s /\
  total s = fixed c + costs (normal_render s) /\
  (mode_of s = Normal <-> total s <= budget c).
Proof.
  intros I s.
  assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  split; [reflexivity|]. split.
  - rewrite <- C. apply total_is_rendering_cost.
  - rewrite <- C. apply mode_normal.
Qed.

(* stable_ids.  Methodology, "Workspace invariants": "every actionable unit
   must have a stable block ID or handle."  Blocks are numbered B1..Bn in
   registration order, tombstones included; every operation leaves each
   registered block's identity (number, type, bytes, call ids) as it was and
   only appends new blocks with the next numbers; a group keeps its members
   under its ID, and a new group gets an ID above every group ID used before
   (so no ID is ever reused, even after deletion). *)
Theorem workspace_stable_ids (c : config) (d : nat) (s0 : state) (ops : list op) (o : op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  let s' := fst (step s o) in
  map b_id (blocks s) = seq 1 (nblocks s) /\
  map b_id (blocks s') = seq 1 (nblocks s') /\
  (exists fresh, regs s' = regs s ++ fresh) /\
  (forall x, In x (groups s) -> g_id x <= ngroups s) /\
  ngroups s <= ngroups s' /\
  (forall x', In x' (groups s') ->
     (exists x, In x (groups s) /\ gmeaning x = gmeaning x') \/ ngroups s < g_id x').
Proof.
  intros I s s'.
  destruct (init_fresh c d s0 I) as [I1 I2].
  assert (A : ids_ok s) by (apply run_invariant; auto; intros; apply stable_step; auto).
  assert (B : gids_ok s) by (apply run_invariant; auto; intros; apply gids_step; auto).
  destruct (stable_step s o A) as [A' R].
  destruct (gstep_step s o) as [N G].
  split; [exact A|]. split; [exact A'|]. split; [exact R|]. split; [exact B|]. split; [exact N|].
  intros x' Hx. destruct (G x' Hx) as [L|L]; [left; exact L|right; lia].
Qed.

(* protocol.  Methodology, "Structure preservation": "tool results stay
   linked to their calls and archived results render in protocol-valid
   form."  Every rendering, ordinary or management, satisfies the OpenAI
   pairing rule -- each assistant message with tool calls (distinct ids) is
   followed, before any other message, by exactly one tool message per call
   (the result, its placeholder, handle, member stub or tombstone, or a
   pending placeholder), and no tool message appears anywhere else (a result
   whose call left the prompt renders as ordinary context) -- and, as an
   Anthropic Messages request (leading system messages to the system field,
   consecutive same-side messages merged), the Anthropic rules: turns
   alternate starting with user, each assistant turn's tool_use ids are
   answered exactly by the tool_result blocks leading the next user turn, and
   on the wire (a call id reused once answered is renamed per assistant turn)
   every tool_use id is unique in the whole request. *)
Theorem workspace_protocol (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  openai_valid (render (run s0 ops)) /\ anthropic_valid (render (run s0 ops)).
Proof.
  intro I.
  assert (P : proto_inv (run s0 ops)).
  { apply run_invariant; [exact (proto_init c d s0 I)|]. intros s o H. apply proto_step; exact H. }
  split; [apply render_valid | apply render_anthropic]; exact P.
Qed.

(* recoverability.  Methodology, "Workspace invariants": "archived payload
   bytes remain recoverable unless the agent explicitly deletes them."  For
   every sequence of operations, every block that was not deleted -- in the
   prompt, archived on its own, offloaded by the guard, or inside a (nested)
   archive group -- is recovered with exactly the bytes it was registered
   with (b_data never changes, by workspace_stable_ids; for a result the guard
   rejected, the notice that replaced it). *)
Theorem workspace_recoverability (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  forall b, In b (blocks s) -> b_status b <> Deleted -> recover s (b_id b) = Some (b_data b).
Proof.
  intros I s b Hb D. apply recover_ok; auto.
  apply run_invariant; [exact (rec_init c d s0 I)|]. intros s1 o H. apply rec_step; exact H.
Qed.

(* fidelity.  Methodology, Context Stream: "(i) visible blocks appear in the
   active prompt with exact content; pinned blocks are a protocol-required
   subset of this state. (ii) archived blocks are replaced by compact handles
   and summaries, while their original bytes are stored externally."  And
   eq. (workspace-render): "C_t = preflight(render(V_t) + handles(A_t) + D_t, B)
   ... preflight emits a budget-safe management rendering C_t that retains
   the dashboard, actionable handles, and compact stubs ...; otherwise it
   returns the ordinary rendering."  The rendering is, message for message,
   the one Spec.v defines over the state: in normal mode (the candidate fits
   B) every position in order with its defined form -- a visible or pinned
   block with its exact registered bytes (a rejected result: its notice), an
   archived or offloaded block its handle or placeholder naming its payload
   key, level and stored payload, a group its handle at its first leaf and a
   member stub where a call stays answered, a deleted result its tombstone --
   then the pending placeholders and the dashboard; in management mode every
   pinned block and the management dashboard.  In normal mode every visible
   or pinned block has a message showing exactly its bytes. *)
Theorem workspace_fidelity (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  render s = sp_render s /\
  (sp_candidate_tokens s <= budget c ->
     forall b, In b (sp_blocks s) -> sp_shown_in_prompt (b_status b) = true ->
     exists m, In m (render s) /\ m_pos m = PB (b_id b) /\ m_show m = SData (b_data b)).
Proof. exact (fidelity_run c d s0 ops). Qed.

(* ledger.  Methodology, "Context Stream": "D_t is the dashboard: a factual
   ledger of block IDs, token estimates, recency, block type, archive level,
   status, and remaining budget"; "Workspace invariants": "The dashboard
   reports the same token estimates used by these checks, so the agent sees
   the state that the harness will enforce"; Implementation Details,
   "Dashboard format" (ID, ~Tok, Age, Type, Level, Parent, Status; "Age =
   root-turn distance; 0r newest").  Every ledger row is Spec.v's row of its
   unit: one per live top-level unit in first-block order, with its ID, ~Tok
   (its position's cost while in the prompt, its cost when it left the
   prompt otherwise, the members' sum for a group), age (root turns
   registered after the unit's own; a result in its call's turn; a group
   dated by its newest leaf), type, level, parent (a result's call) and
   status; and the budget line's overhead, conversation and dashboard are
   the figures whose sum preflight compares with B. *)
Theorem workspace_ledger (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  ledger s = sp_ledger s /\
  overhead s = sp_overhead s /\ conversation s = sp_conversation s /\
  total s = sp_overhead s + sp_conversation s + dash s /\
  (mode_of s = Normal <-> sp_overhead s + sp_conversation s + dash s <= budget c).
Proof. exact (ledger_run c d s0 ops). Qed.

(* guard.  Methodology, Context Stream: "A separate hard-budget guard may
   replace already-visible raw tool results with recoverable offloaded
   placeholders; a new tool result that still cannot fit is rejected with a
   compact notice"; "Mode switch": "A final preflight guard can offload
   already-visible raw tool-result blocks near the hard limit; if a newly
   returned result still cannot be admitted, the harness rejects that result
   instead of silently truncating it"; Algorithm 1: "Apply the budget guard:
   admit fitting results; offload eligible visible raw results or reject an
   unadmittable new result".  When a tool result is registered (any state
   reached by any operations): its block is the next one, visible, holding the
   result's bytes if admitted and the notice's bytes (marked rejected)
   otherwise; it is rejected by the cap exactly when it could not fit a normal
   rendering of B beside the fixed overhead, the pinned blocks, its call and
   the smallest dashboard; an admitted result leaves the candidate (every
   position, the pending placeholders, the dashboard figure of the
   evaluation that admitted it) within the hard limit; and, with one
   dashboard figure, the guard offloads exactly the shortest prefix of the
   eligible results (visible, unrejected, oldest first) whose gains cover the
   excess over the hard limit, and rejects the result, offloading nothing,
   when even all of them do not. *)
Theorem workspace_guard (c : config) (d : nat) (s0 : state) (ops : list op)
    (cid data : nat) (cc p : nat * nat) (t notice : nat) (nc : nat * nat) (ds : list nat) :
  init c d = Some s0 ->
  let s := run s0 ops in
  let o := OResult cid data cc p t notice nc ds in
  let s' := fst (step s o) in
  let r := snd (step s o) in
  r_ok r = None ->
  (exists b, sp_block s' (S (nblocks s)) = Some b /\ b_kind b = KResult /\ b_status b = Visible /\
     match r_guard r with
     | GAdmit => b_data b = data /\ b_rej b = false
     | _ => b_data b = notice /\ b_rej b = true
     end) /\
  (r_guard r = GRejectCap <->
     budget c < fst cc + fixed c + sp_pinned_cost s + sp_call_cost s + dfloor c) /\
  (r_guard r = GAdmit -> exists k, sp_content s' + sp_dash_at ds k <= hard c) /\
  (forall dd, ds = [dd] -> r_guard r <> GRejectCap ->
     match sp_cover (sp_guard_order s cid data cc p t)
             (Z.of_nat (sp_content s + fst cc + dd - sp_pend_cost (pending s) cid)
              - Z.of_nat (hard c))%Z with
     | Some plan => (r_guard r = GAdmit \/ r_guard r = GRejectPending) /\ r_offloaded r = plan
     | None => r_guard r = GRejectHard /\ r_offloaded r = []
     end).
Proof. exact (guard_run c d s0 ops cid data cc p t notice nc ds). Qed.

(* deletion.  Methodology, Context Stream: "Deletion is an explicit agent
   action, not a storage regime: it removes the selected content
   permanently"; the delete tool (Appendix, context_workspace_delete):
   "Deleted content cannot be recovered".  When a delete of the units [us]
   is done (any state reached by any operations), then after it and after
   any later operations [later]: the store holds nothing under any deleted
   unit's key (its payload, a block's raw bytes or a group's payload, is
   gone), and every leaf of a deleted unit (the block itself; for a group,
   every block inside it or inside the groups nested in it, as they were
   before the delete) is a tombstone that recover refuses, with no store
   entry holding its bytes (neither its own key nor an entry inlined in any
   group payload): nothing deleted is recoverable, and no later archive,
   restore, offload or registration brings it back (GroupProofs.v). *)
Theorem workspace_deletion (c : config) (d : nat) (s0 : state) (ops : list op) (us : list uid)
    (dm : nat) (later : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  r_ok (snd (step s (ODelete us dm))) = None ->
  let s' := run (fst (step s (ODelete us dm))) later in
  forall u, In u us ->
  sp_lookup (sp_key_of u) (store s') = None /\
  forall n, In n (sp_leaves s u) ->
    sp_deleted s' n = true /\ recover s' n = None /\
    forall kv, In kv (store s') -> sp_holds n kv = false.
Proof. exact (deletion_leaves_run c d s0 ops us dm later). Qed.

(* archive_contract.  Methodology, eq. (archive-contract):
   "read_path(h) == payload(S)"; Context Stream: "(ii) archived blocks are
   replaced by compact handles and summaries, while their original bytes are
   stored externally".  For every handle the rendering shows (any state
   reached by any operations, either rendering, either cache_prefix): a
   block's own handle or offload placeholder, or a group's handle (a group
   nested in others shows the handle of its top-level group): the handle shows
   its unit's store key, the unit's archive level and the payload stored
   there (the driver interns bytes, so the payload stands for its size and
   checksum); the store holds a payload under that key; and reading the key,
   following every reference nested in group payloads (a member block
   archived before by its own key, a member group by its key), yields exactly
   the payload of the unit: each of its leaves, in the group's member order,
   with the bytes it was registered with (GroupProofs.v: a group's payload
   lists its members in order, inlined or referenced, every operation
   keeping that). *)
Theorem workspace_archive_contract (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  forall m u, In m (render s) -> sp_handle_unit (m_form m) (m_pos m) = Some u ->
  m_show m = SHandle (sp_key_of u) (sp_level s u) (sp_payload s (sp_key_of u)) /\
  sp_lookup (sp_key_of u) (store s) <> None /\
  sp_read_path s (sp_key_of u) = Some (sp_unit_payload s u).
Proof. exact (archive_contract_run c d s0 ops). Qed.

(* ledger_levels.  Implementation Details, "Dashboard format" (~Tok, Level);
   Context Stream: "D_t is the dashboard: a factual ledger of ... token
   estimates, ... archive level".  The figures the ledger shows for an
   archived block are recorded when it is archived (workspace_ledger reads
   them from the state): archiving one block on its own (any state reached
   by any operations) makes it archived, at level 1 if it was in the prompt
   and one level above its own otherwise, and its ~Tok is the ~Tok its
   ledger row showed just before (its position's cost while in the prompt). *)
Theorem workspace_ledger_levels (c : config) (d : nat) (s0 : state) (ops : list op)
    (n : nat) (h : nat * nat) (stubs : list (nat * nat)) (dd : nat) (b : block) :
  init c d = Some s0 ->
  let s := run s0 ops in
  let o := OArchive [UB n] h stubs dd in
  r_ok (snd (step s o)) = None -> sp_block s n = Some b ->
  exists b', sp_block (fst (step s o)) n = Some b' /\ b_status b' = Archived /\
    b_level b' = (if sp_shown_in_prompt (b_status b) then 1 else S (b_level b)) /\
    b_tok b' = r_tok (sp_block_row s b).
Proof. exact (levels_run c d s0 ops n h stubs dd b). Qed.

(* The theorems above have exactly the types of Claims.v's statements (the
   ones a refutation of a mutant of Model.v disproves). *)
Definition statement_of_fidelity : claim_fidelity := workspace_fidelity.
Definition statement_of_budget : claim_budget :=
  fun c d s0 ops I => workspace_budget c d s0 ops (init_floor c d s0 I) I.
Definition statement_of_ledger : claim_ledger := workspace_ledger.
Definition statement_of_guard : claim_guard := workspace_guard.
Definition statement_of_deletion : claim_deletion_leaves := workspace_deletion.
Definition statement_of_archive_contract : claim_archive_contract := workspace_archive_contract.
