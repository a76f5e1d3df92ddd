(* Proposition 1 (recovery is necessary under budget pressure), for all N,
   all block alphabets of size K >= 2 (K = 2^k gives the paper's k-bit
   blocks), every pre-reveal state R on a finite type with H(R) <= B, and
   every guess g(R, i_star):
       Pr[correct] <= B / (N log2 K) + 1 / log2 K,
   i.e. B/(Nk) + 1/k for K = 2^k.  The N blocks X_1..X_N are independent and
   uniform, i.e. X is uniform on {ffun 'I_N -> 'I_K}; R may depend on X and on
   internal randomness in any way (an arbitrary joint law of (X, R)). *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Lemma log2_prod (I : finType) (F : I -> R) : (forall i, 0 < F i) ->
  log2 (\big[Rmult/1]_i F i) = \sum_i log2 (F i).
Proof.
move=> h.
suff [] : 0 < \big[Rmult/1]_i F i /\ log2 (\big[Rmult/1]_i F i) = \sum_i log2 (F i) by [].
apply: (big_rec2 (fun x y => 0 < x /\ log2 x = y)); first by split; [lra | exact: log2_1].
move=> i x y _ [xp e]; split; first exact: Rmult_lt_0_compat.
by rewrite log2_mul // e.
Qed.

Lemma INR_expn (a b : nat) : INR (a ^ b)%N = INR a ^ b.
Proof. by elim: b => [|b IH] //=; rewrite expnS mult_INR IH. Qed.

Section Prop1.
Variables N K : nat.
Hypothesis N_pos : (0 < N)%N.
Hypothesis K_ge2 : (1 < K)%N.
Variable TR : finType.

(* Joint law of the blocks X = (X_1..X_N) and the state R. *)
Variable p : {ffun 'I_N -> 'I_K} -> TR -> R.
Hypothesis p_joint : is_joint p.
Hypothesis X_uniform : forall x, marg1 p x = / INR (K ^ N).

(* After the reveal of i_star, the method outputs g(R, i_star). *)
Variable g : TR -> 'I_N -> 'I_K.

(* Pr[correct] with i_star uniform on [N], independent of (X, R). *)
Definition Pcorrect :=
  / INR N * \sum_i \sum_(x : {ffun 'I_N -> 'I_K}) \sum_r (if g r i == x i then p x r else 0).

Let NR : 0 < INR N.
Proof. by apply: lt_0_INR; apply/ltP. Qed.
Let KR : 1 < INR K.
Proof. by apply: lt_1_INR; apply/ltP. Qed.
Let KR2 : 2 <= INR K.
Proof.
have : INR 2 <= INR K by apply: le_INR; apply/leP.
by rewrite (_ : INR 2 = 2) //= ; lra.
Qed.
Let L := log2 (INR K - 1).
Let L0 : 0 <= L.
Proof. by rewrite /L -log2_1; apply: log2_le; lra. Qed.
Let LK : L <= log2 (INR K).
Proof. by apply: log2_le; lra. Qed.
Let lK : 0 < log2 (INR K).
Proof. by rewrite -log2_1; apply: log2_lt; lra. Qed.

Lemma H_blocks : H (marg1 p) = INR N * log2 (INR K).
Proof.
have c : #|{ffun 'I_N -> 'I_K}| = (K ^ N)%N by rewrite card_ffun !card_ord.
have cp : (0 < #|{ffun 'I_N -> 'I_K}|)%N by rewrite c expn_gt0 (ltn_trans _ K_ge2).
rewrite (H_ext (q' := fun _ => / INR #|{ffun 'I_N -> 'I_K}|)); last by move=> x; rewrite X_uniform c.
rewrite H_uniform // c INR_expn /log2 ln_pow; last lra.
rewrite /Rdiv; ring.
Qed.

(* Reference law for the state r: block i equals g r i with prob. 1/2,
   each other value with prob. 1/(2(K-1)). *)
Definition rho (r : TR) (i : 'I_N) (b : 'I_K) : R :=
  if b == g r i then / 2 else / (2 * (INR K - 1)).

Lemma rho_pos r i b : 0 < rho r i b.
Proof. by rewrite /rho; case: ifP => _; apply: Rinv_0_lt_compat; lra. Qed.

Lemma rho_sum r i : \sum_b rho r i b = 1.
Proof.
rewrite (bigD1 (g r i)) //= /rho eqxx.
rewrite (eq_bigr (fun _ => / (2 * (INR K - 1)))); last by move=> b /negbTE ->.
have e : INR K.-1 = INR K - 1.
  have h : (0 < K)%N by apply: ltn_trans K_ge2.
  by rewrite -{2}(prednK h) S_INR; ring.
rewrite sumR_const cardC1 card_ord e.
field; lra.
Qed.

Lemma H_state_bound r (q : {ffun 'I_N -> 'I_K} -> R) : is_dist q ->
  H q <= INR N + L * \sum_i \sum_(x : {ffun 'I_N -> 'I_K}) (if g r i == x i then 0 else q x).
Proof.
move=> qd.
pose ref x := \big[Rmult/1]_i rho r i (x i).
have refp : forall x, 0 < ref x.
  move=> x; apply: (big_ind (fun v => 0 < v)) => //; first lra.
    by move=> a b; apply: Rmult_lt_0_compat.
  by move=> i _; exact: rho_pos.
apply: (Rle_trans _ (crossH q ref)).
  apply: gibbs; [exact: qd | by move=> x; left | by move=> x _ |].
  rewrite /ref -bigA_distr_bigA /= big1 //; first lra.
  by move=> i _; exact: rho_sum.
have mlog : forall x, - log2 (ref x)
                     = \sum_i (1 + (if g r i == x i then 0 else L)).
  move=> x; rewrite /ref log2_prod; last by move=> i; exact: rho_pos.
  rewrite -sumR_opp; apply: eq_bigr => i _; rewrite /rho eq_sym.
  case: eqP => _; first by rewrite log2_inv ?log2_2; lra.
  rewrite log2_inv ?log2_mul ?log2_2 /L; lra.
rewrite /crossH.
have -> : - (\sum_x q x * log2 (ref x)) = \sum_x q x * (- log2 (ref x)).
  by rewrite -sumR_opp; apply: eq_bigr => x _; ring.
rewrite (eq_bigr _ (fun x _ => congr1 (Rmult (q x)) (mlog x))).
rewrite (eq_bigr (fun x => \sum_i (q x + (if g r i == x i then 0 else L * q x)))); last first.
  by move=> x _; rewrite -sumR_scal; apply: eq_bigr => i _; case: ifP => _; ring.
rewrite exchange_big /=.
rewrite (eq_bigr (fun i => 1 + L * \sum_(x : {ffun 'I_N -> 'I_K}) (if g r i == x i then 0 else q x))); last first.
  move=> i _; rewrite big_split /= qd.2 -sumR_scal; congr (_ + _).
  by apply: eq_bigr => x _; case: ifP => _; ring.
rewrite big_split /= sumR_constT card_ord sumR_scal Rmult_1_r; apply: Req_le; reflexivity.
Qed.

(* Hit probability for block i. *)
Definition hit i := \sum_(x : {ffun 'I_N -> 'I_K}) \sum_r (if g r i == x i then p x r else 0).

Lemma miss_sum i :
  \sum_r marg2 p r * (\sum_(x : {ffun 'I_N -> 'I_K}) (if g r i == x i then 0 else post p r x)) = 1 - hit i.
Proof.
transitivity (\sum_r \sum_(x : {ffun 'I_N -> 'I_K}) (if g r i == x i then 0 else p x r)).
  apply: eq_bigr => r _; rewrite -sumR_scal; apply: eq_bigr => x _.
  by case: ifP => _; rewrite ?(marg2_post x r p_joint); ring.
rewrite exchange_big /= -p_joint.2 /hit -sumR_sub; apply: eq_bigr => x _.
by rewrite -sumR_sub; apply: eq_bigr => r _; case: ifP => _; ring.
Qed.

Lemma hit_le1 i : hit i <= 1.
Proof.
rewrite -p_joint.2; apply: leR_sum => x _; apply: leR_sum => r _.
by case: ifP => _; [lra | exact: p_joint.1].
Qed.

(* Proposition 1: H(R) <= B implies Pr[correct] <= B/(N log2 K) + 1/log2 K. *)
Theorem prop1_bound (B : R) :
  H (marg2 p) <= B -> Pcorrect <= B / (INR N * log2 (INR K)) + / log2 (INR K).
Proof.
move=> HB.
(* H(X | R) >= H(X) - H(R) >= N log2 K - B. *)
have lower : INR N * log2 (INR K) - B <= condH p.
  have := chain_rule p_joint; have := Hjoint_ge_marg1 p_joint; rewrite H_blocks; lra.
(* H(X | R) <= N + L sum_i (1 - hit_i). *)
have upper : condH p <= INR N + L * \sum_i (1 - hit i).
  apply: (Rle_trans _ (\sum_r marg2 p r *
            (INR N + L * \sum_i \sum_(x : {ffun 'I_N -> 'I_K}) (if g r i == x i then 0 else post p r x)))).
    by apply: condH_le => // r mr; apply: H_state_bound; exact: post_dist.
  rewrite (eq_bigr (fun r => marg2 p r * INR N +
            L * \sum_i (marg2 p r * \sum_(x : {ffun 'I_N -> 'I_K}) (if g r i == x i then 0 else post p r x))));
    last by move=> r _; rewrite sumR_scal; ring.
  rewrite big_split /= sumR_scar sum_marg2 // sumR_scal exchange_big /=.
  rewrite (eq_bigr _ (fun i _ => miss_sum i)); lra.
have miss0 : 0 <= \sum_i (1 - hit i).
  by apply: sumR_ge0 => i _; have := hit_le1 i; lra.
have : L * (\sum_i (1 - hit i)) <= log2 (INR K) * (\sum_i (1 - hit i)).
  by apply: Rmult_le_compat_r.
rewrite sumR_sub sumR_constT card_ord => h2.
rewrite sumR_sub sumR_constT card_ord in upper.
have key : log2 (INR K) * (\sum_i hit i) <= INR N + B by nra.
rewrite /Pcorrect -/(hit _).
have -> : \sum_i \sum_(x : {ffun 'I_N -> 'I_K}) \sum_r (if g r i == x i then p x r else 0) = \sum_i hit i by [].
have -> : B / (INR N * log2 (INR K)) + / log2 (INR K)
          = / INR N * ((INR N + B) / log2 (INR K)) by field; lra.
apply: Rmult_le_compat_l; first by left; apply: Rinv_0_lt_compat.
apply: (Rmult_le_reg_r (log2 (INR K))) => //.
rewrite /Rdiv Rmult_assoc Rinv_l; lra.
Qed.

(* The paper's form for k-bit blocks, K = 2^k. *)
Theorem prop1_bits (k : nat) (B : R) : K = (2 ^ k)%N ->
  H (marg2 p) <= B -> Pcorrect <= B / (INR N * INR k) + / INR k.
Proof.
move=> Kk HB; have := prop1_bound HB.
suff -> : log2 (INR K) = INR k by [].
have e : INR 2 = 2 by simpl; ring.
have l2 := ln2_pos.
rewrite Kk INR_expn e /log2 ln_pow; [field; lra | lra].
Qed.

End Prop1.

(* ------------------------------------------------------------------ *)
(* The recovering method (VISTA) is modelled in Statements.v
   (proposition1_recovering, proposition1_recovering_store): a payload store
   outside the prompt, read back by handle, with the handles in the prompt. *)
